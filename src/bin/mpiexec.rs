fn main() {
    eprintln!("oxmpi: mpiexec is not built yet");
    std::process::exit(2);
}
