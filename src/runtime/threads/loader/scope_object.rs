//! A "scope object": a tiny ELF shared object, made in memory, that defines nothing and only
//! needs other objects (`DT_NEEDED`), to give something `dlopen` loads a lookup scope of our
//! choosing.
//!
//! glibc resolves the undefined symbols of the objects one `dlopen` call loads in the global
//! scope first, then in the local scope of the object named in that call: it and its
//! dependencies, breadth first (`_dl_map_object_deps`). So `dlopen` of a scope object that needs
//! `[rank's program, plugin]` binds the plugin's symbols to what a process of its own would give
//! it, the rank's program and that program's libraries (a Python extension finds the rank's own
//! `libpython`), and `dlsym` on the returned handle finds the plugin's symbols. A dependency that
//! is already loaded is matched by its name string and not loaded again.
//!
//! Layout (ELF64, x86-64, one read-write `PT_LOAD` from offset 0, as glibc may write to the
//! dynamic section in place): header, program headers (`PT_LOAD`, `PT_DYNAMIC`, `PT_GNU_STACK`,
//! the last so that no executable stack is asked for), a symbol table with the null symbol only,
//! a one-bucket `DT_HASH`, the string table, the dynamic section.

const EHDR: usize = 64;
const PHDR: usize = 56;
const NPHDR: usize = 3;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_GNU_STACK: u32 = 0x6474_e551;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
const DT_NEEDED: u64 = 1;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_STRSZ: u64 = 10;
const DT_SYMENT: u64 = 11;

fn align8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// The bytes of a shared object that needs `needed`, in that order. Errors on a name with a NUL.
pub fn build(needed: &[&str]) -> Result<Vec<u8>, &'static str> {
    if needed.iter().any(|n| n.as_bytes().contains(&0)) {
        return Err("a needed name holds a NUL byte");
    }
    let symtab = EHDR + PHDR * NPHDR;
    let hash = symtab + 24;
    let strtab = hash + 16;
    let mut strings = vec![0u8];
    let mut offsets = Vec::with_capacity(needed.len());
    for n in needed {
        offsets.push(strings.len() as u64);
        strings.extend_from_slice(n.as_bytes());
        strings.push(0);
    }
    let dynamic = align8(strtab + strings.len());
    let mut dyns: Vec<(u64, u64)> = offsets.iter().map(|&o| (DT_NEEDED, o)).collect();
    dyns.extend([
        (DT_HASH, hash as u64),
        (DT_STRTAB, strtab as u64),
        (DT_SYMTAB, symtab as u64),
        (DT_STRSZ, strings.len() as u64),
        (DT_SYMENT, 24),
        (0, 0),
    ]);
    let size = dynamic + dyns.len() * 16;
    let mut b = vec![0u8; size];
    let put = |b: &mut Vec<u8>, at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);
    // ELF header: magic, 64-bit, little-endian, version 1, System V ABI.
    put(&mut b, 0, &[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    put(&mut b, 16, &3u16.to_le_bytes()); // ET_DYN
    put(&mut b, 18, &62u16.to_le_bytes()); // EM_X86_64
    put(&mut b, 20, &1u32.to_le_bytes()); // EV_CURRENT
    put(&mut b, 32, &(EHDR as u64).to_le_bytes()); // e_phoff
    put(&mut b, 52, &(EHDR as u16).to_le_bytes()); // e_ehsize
    put(&mut b, 54, &(PHDR as u16).to_le_bytes()); // e_phentsize
    put(&mut b, 56, &(NPHDR as u16).to_le_bytes()); // e_phnum
    put(&mut b, 58, &64u16.to_le_bytes()); // e_shentsize (no sections)
    let phdr = |b: &mut Vec<u8>, i: usize, typ: u32, flags: u32, off: usize, len: usize, align: u64| {
        let at = EHDR + i * PHDR;
        put(b, at, &typ.to_le_bytes());
        put(b, at + 4, &flags.to_le_bytes());
        for (k, v) in [off as u64, off as u64, off as u64, len as u64, len as u64, align].iter().enumerate() {
            put(b, at + 8 + k * 8, &v.to_le_bytes()); // offset, vaddr, paddr, filesz, memsz, align
        }
    };
    phdr(&mut b, 0, PT_LOAD, PF_R | PF_W, 0, size, 0x1000);
    phdr(&mut b, 1, PT_DYNAMIC, PF_R | PF_W, dynamic, dyns.len() * 16, 8);
    phdr(&mut b, 2, PT_GNU_STACK, PF_R | PF_W, 0, 0, 16);
    // Symbol 0 is all zeros; the hash table: nbucket 1, nchain 1, bucket[0] = 0, chain[0] = 0.
    put(&mut b, hash, &1u32.to_le_bytes());
    put(&mut b, hash + 4, &1u32.to_le_bytes());
    put(&mut b, strtab, &strings);
    for (i, (tag, val)) in dyns.iter().enumerate() {
        put(&mut b, dynamic + i * 16, &tag.to_le_bytes());
        put(&mut b, dynamic + i * 16 + 8, &val.to_le_bytes());
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::super::private_libs::tests::cc;
    use super::*;
    use std::ffi::{c_int, c_void, CString};

    fn memfd(bytes: &[u8]) -> String {
        // The descriptor stays open (ld.so matches paths by name).
        super::super::memfd::path(super::super::memfd::with_image("oxmpi-scope-test", bytes).unwrap())
    }

    fn open(path: &str) -> *mut c_void {
        let p = CString::new(path).unwrap();
        // SAFETY: the test's own objects.
        unsafe { libc::dlopen(p.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) }
    }

    fn call(h: *mut c_void, name: &str) -> c_int {
        let n = CString::new(name).unwrap();
        // SAFETY: a live handle and a C string.
        let p = unsafe { libc::dlsym(h, n.as_ptr()) };
        assert!(!p.is_null(), "{name} not found");
        // SAFETY: the test's functions are int f(void).
        unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(p)() }
    }

    /// A plugin that uses an undefined symbol only a "host" library defines cannot be loaded
    /// alone; through a scope object that needs two different hosts first, each copy binds to
    /// its own host.
    #[test]
    fn a_plugin_binds_to_the_host_its_scope_object_names() {
        let dir = std::env::temp_dir().join(format!("oxmpi-scope-object-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        cc(&dir, "host_a.so", "int oxso_host_value(void) { return 11; }", &[]);
        cc(&dir, "host_b.so", "int oxso_host_value(void) { return 22; }", &[]);
        cc(&dir, "plugin.so", "int oxso_host_value(void); static int n; int oxso_plugin(void) { return oxso_host_value() + ++n; }", &[]);
        let (a, b) = (dir.join("host_a.so"), dir.join("host_b.so"));
        let (ha, hb) = (open(a.to_str().unwrap()), open(b.to_str().unwrap()));
        assert!(!ha.is_null() && !hb.is_null());
        let plugin = std::fs::read(dir.join("plugin.so")).unwrap();
        assert!(open(&memfd(&plugin)).is_null(), "alone, the plugin's symbol is undefined");
        let copy1 = memfd(&plugin);
        let wa = open(&memfd(&build(&[a.to_str().unwrap(), dir.join("plugin.so").to_str().unwrap()]).unwrap()));
        let wb = open(&memfd(&build(&[b.to_str().unwrap(), &copy1]).unwrap()));
        assert!(!wa.is_null() && !wb.is_null(), "{}", super::super::dlerror_text());
        assert_eq!((call(wa, "oxso_plugin"), call(wa, "oxso_plugin")), (12, 13));
        assert_eq!(call(wb, "oxso_plugin"), 23, "the second copy has its own state and host");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_with_nul_are_refused() {
        assert!(build(&["a\0b"]).is_err());
        let b = build(&["x"]).unwrap();
        assert_eq!(&b[..4], b"\x7fELF");
    }
}
