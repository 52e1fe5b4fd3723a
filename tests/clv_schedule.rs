//! Runs the clv-schedule command on the paper's example (Proficz & Ocetkiewicz 2021 section 4.2).
use std::process::Command;

fn run(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_clv-schedule")).args(args).output().expect("clv-schedule runs");
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn paper_example_json() {
    let (ok, out, _) = run(&["--procs", "4", "--segments", "4", "--root", "0", "--round", "1", "--arrivals", "0,0,0,1.1", "--json", "--compare-linear", "--verify"]);
    assert!(ok);
    for want in ["\"rounds\": 6,", "\"transfers\": 15,", "\"copies\": 3,", "\"build_ns\": ", "\"linear_ns\": ", "\"identical\": true", "\"verified\": true"] {
        assert!(out.contains(want), "{want} not in {out}");
    }
}

#[test]
fn patterns_and_svg() {
    let svg = std::env::temp_dir().join(format!("clv-test-{}.svg", std::process::id()));
    let (ok, out, _) = run(&["--procs", "16", "--segments", "8", "--pattern", "skewed", "--seed", "3", "--json", "--compare-linear", "--verify", "--svg", svg.to_str().unwrap()]);
    assert!(ok && out.contains("\"identical\": true") && out.contains("\"verified\": true"), "{out}");
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.matches("<line").count() > 16 * 8);
    std::fs::remove_file(svg).ok();
}

#[test]
fn bad_input_is_reported() {
    let (ok, _, err) = run(&["--procs", "4", "--segments", "4", "--root", "7", "--arrivals", "0,0,0,0"]);
    assert!(!ok && err.contains("root 7"), "{err}");
    let (ok, _, err) = run(&["--segments", "4", "--pattern", "normal"]);
    assert!(!ok && err.contains("normal"), "{err}");
    let (ok, out, _) = run(&["--help"]);
    assert!(ok && out.contains("--compare-linear"));
}
