//! Just enough ELF reading to decide how to run an existing MPI binary.
//!
//! The launcher needs the program's DT_NEEDED list (is it an MPICH, oxmpi or Open MPI program?)
//! and whether it carries DT_RPATH/DT_RUNPATH (which can make the dynamic loader pick MPICH's
//! libmpi over ours despite LD_LIBRARY_PATH). We read the dynamic section through the program
//! headers, as the loader does, so stripped binaries without section headers work too. Only
//! 64-bit little-endian ELF is understood; anything else is reported as "not ELF we can read"
//! and the program simply gets LD_LIBRARY_PATH.
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const DT_NULL: i64 = 0;
const DT_NEEDED: i64 = 1;
const DT_STRTAB: i64 = 5;
const DT_STRSZ: i64 = 10;
const DT_RPATH: i64 = 15;
const DT_RUNPATH: i64 = 29;

/// Limits that keep a corrupt file from making us allocate or loop without bound.
const MAX_PHDRS: usize = 4096;
const MAX_DYN_BYTES: u64 = 1 << 20;
const MAX_STRTAB_BYTES: u64 = 16 << 20;

/// What the dynamic section says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DynInfo {
    /// DT_NEEDED library names, in order.
    pub needed: Vec<String>,
    /// DT_RPATH or DT_RUNPATH present.
    pub has_rpath: bool,
    /// The directories DT_RPATH and DT_RUNPATH name, in order (`$ORIGIN` not expanded), for
    /// finding the libraries the object needs (`closure`).
    pub rpath: Vec<String>,
}

impl DynInfo {
    pub fn needs(&self, lib: &str) -> bool {
        self.needed.iter().any(|n| n == lib)
    }
}

/// Random-access reads of the file being parsed (a `File`, or a byte slice in tests).
trait ReadAt {
    fn read_at_exact(&self, off: u64, buf: &mut [u8]) -> io::Result<()>;
}

impl ReadAt for File {
    fn read_at_exact(&self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        self.read_exact_at(buf, off)
    }
}

impl ReadAt for [u8] {
    fn read_at_exact(&self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        let start = usize::try_from(off).map_err(|_| bad("offset out of range"))?;
        let end = start.checked_add(buf.len()).ok_or_else(|| bad("offset out of range"))?;
        let src = self.get(start..end).ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("malformed ELF: {msg}"))
}

fn u16le(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes(b[o..o + 2].try_into().unwrap())
}
fn u32le(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
fn u64le(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// Reads the dynamic information of the file at `path`.
/// `Ok(None)`: not a 64-bit little-endian ELF file (e.g. a script). `Ok(Some(default))`: ELF
/// without a dynamic section (static binary).
pub fn read_dyn_info(path: &Path) -> io::Result<Option<DynInfo>> {
    let f = File::open(path)?;
    parse(&f)
}

/// Same as `read_dyn_info`, on bytes in memory.
#[cfg(test)]
pub fn parse_bytes(bytes: &[u8]) -> io::Result<Option<DynInfo>> {
    parse(bytes)
}

fn parse<R: ReadAt + ?Sized>(src: &R) -> io::Result<Option<DynInfo>> {
    let mut eh = [0u8; 64];
    match src.read_at_exact(0, &mut eh) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None), // too short: not ELF
        Err(e) => return Err(e),
    }
    // ELFCLASS64 (2), ELFDATA2LSB (1)
    if &eh[0..4] != b"\x7fELF" || eh[4] != 2 || eh[5] != 1 {
        return Ok(None);
    }
    let phoff = u64le(&eh, 32);
    let phentsize = u16le(&eh, 54) as usize;
    let phnum = u16le(&eh, 56) as usize;
    if phnum == 0 {
        return Ok(Some(DynInfo::default()));
    }
    if phentsize < 56 || phnum > MAX_PHDRS {
        return Err(bad("program header table"));
    }
    let mut ph = vec![0u8; phentsize * phnum];
    src.read_at_exact(phoff, &mut ph).map_err(|_| bad("program headers past end of file"))?;

    // (vaddr, filesz, offset) of each PT_LOAD, to turn DT_STRTAB's address into a file offset.
    let mut loads: Vec<(u64, u64, u64)> = Vec::new();
    let mut dynamic: Option<(u64, u64)> = None;
    for i in 0..phnum {
        let p = &ph[i * phentsize..(i + 1) * phentsize];
        let p_type = u32le(p, 0);
        let p_offset = u64le(p, 8);
        let p_vaddr = u64le(p, 16);
        let p_filesz = u64le(p, 32);
        match p_type {
            PT_LOAD => loads.push((p_vaddr, p_filesz, p_offset)),
            PT_DYNAMIC => dynamic = Some((p_offset, p_filesz)),
            _ => {}
        }
    }
    let Some((dyn_off, dyn_size)) = dynamic else {
        return Ok(Some(DynInfo::default())); // statically linked
    };
    if dyn_size > MAX_DYN_BYTES {
        return Err(bad("dynamic section too large"));
    }
    let mut dy = vec![0u8; dyn_size as usize];
    src.read_at_exact(dyn_off, &mut dy).map_err(|_| bad("dynamic section past end of file"))?;

    let mut needed_offs = Vec::new();
    let mut rpath_offs = Vec::new();
    let mut has_rpath = false;
    let mut strtab: Option<u64> = None;
    let mut strsz: Option<u64> = None;
    for e in dy.chunks_exact(16) {
        let tag = u64le(e, 0) as i64;
        let val = u64le(e, 8);
        match tag {
            DT_NULL => break,
            DT_NEEDED => needed_offs.push(val),
            DT_RPATH | DT_RUNPATH => {
                has_rpath = true;
                rpath_offs.push(val);
            }
            DT_STRTAB => strtab = Some(val),
            DT_STRSZ => strsz = Some(val),
            _ => {}
        }
    }
    if needed_offs.is_empty() && rpath_offs.is_empty() {
        return Ok(Some(DynInfo { needed: Vec::new(), has_rpath, rpath: Vec::new() }));
    }
    let (Some(strtab_addr), Some(strsz)) = (strtab, strsz) else {
        return Err(bad("DT_NEEDED or DT_RPATH without a string table"));
    };
    if strsz > MAX_STRTAB_BYTES {
        return Err(bad("string table too large"));
    }
    let strtab_off = loads
        .iter()
        .find(|&&(va, sz, _)| strtab_addr >= va && strtab_addr - va < sz)
        .map(|&(va, _, off)| off + (strtab_addr - va))
        .ok_or_else(|| bad("string table outside the loaded segments"))?;
    let mut strs = vec![0u8; strsz as usize];
    src.read_at_exact(strtab_off, &mut strs).map_err(|_| bad("string table past end of file"))?;

    let string = |off: u64| -> io::Result<String> {
        let tail = strs.get(off as usize..).ok_or_else(|| bad("a dynamic entry's string outside the string table"))?;
        let end = tail.iter().position(|&c| c == 0).ok_or_else(|| bad("unterminated string"))?;
        Ok(String::from_utf8_lossy(&tail[..end]).into_owned())
    };
    let needed = needed_offs.into_iter().map(string).collect::<io::Result<Vec<_>>>()?;
    let mut rpath = Vec::new();
    for off in rpath_offs {
        rpath.extend(string(off)?.split(':').filter(|d| !d.is_empty()).map(str::to_string));
    }
    Ok(Some(DynInfo { needed, has_rpath, rpath }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn bin_ls() {
        let info = read_dyn_info(Path::new("/bin/ls")).unwrap().expect("/bin/ls is ELF");
        assert!(info.needs("libc.so.6"), "{info:?}");
        assert!(!info.has_rpath);
    }

    #[test]
    fn not_elf() {
        assert_eq!(parse_bytes(b"#!/bin/sh\necho hi\n").unwrap(), None);
        assert_eq!(parse_bytes(b"").unwrap(), None);
        // A script file on disk.
        let dir = std::env::temp_dir().join(format!("oxmpi-elf-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let s = dir.join("s.sh");
        std::fs::write(&s, "#!/bin/sh\nexit 0\n").unwrap();
        assert_eq!(read_dyn_info(&s).unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn truncated_elf_is_an_error_not_a_panic() {
        let bytes = std::fs::read("/bin/ls").unwrap();
        for len in [64, 100, 400, 1000, 4096] {
            let _ = parse_bytes(&bytes[..len.min(bytes.len())]);
        }
        // Header claims a program header table far past the end.
        let mut h = bytes[..64].to_vec();
        h[32..40].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(parse_bytes(&h).is_err());
        // 32-bit class: not for us.
        let mut h32 = bytes[..64].to_vec();
        h32[4] = 1;
        assert_eq!(parse_bytes(&h32).unwrap(), None);
    }

    #[test]
    fn mpich_packaged_binary() {
        let p = Path::new("/usr/bin/NPmpich2");
        if !p.exists() {
            eprintln!("skipped: {} not installed", p.display());
            return;
        }
        let info = read_dyn_info(p).unwrap().unwrap();
        assert!(info.needs("libmpich.so.12") || info.needs("libmpi.so.12"), "{info:?}");
    }

    /// Builds a program with MPICH's compiler wrapper, with and without an RPATH.
    #[test]
    fn mpicc_mpich_binary() {
        let have = Command::new("mpicc.mpich").arg("-show").output().map(|o| o.status.success()).unwrap_or(false);
        if !have {
            eprintln!("skipped: mpicc.mpich not available");
            return;
        }
        let dir = std::env::temp_dir().join(format!("oxmpi-elf-mpicc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("hello.c");
        std::fs::write(&src, "#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n").unwrap();
        let plain = dir.join("hello");
        let rpath = dir.join("hello_rpath");
        let ok = Command::new("mpicc.mpich").arg(&src).arg("-o").arg(&plain).status().unwrap().success();
        assert!(ok, "mpicc.mpich failed");
        let ok = Command::new("mpicc.mpich")
            .arg(&src)
            .arg("-o")
            .arg(&rpath)
            .arg("-Wl,-rpath,/usr/lib/x86_64-linux-gnu")
            .status()
            .unwrap()
            .success();
        assert!(ok, "mpicc.mpich -rpath failed");
        let a = read_dyn_info(&plain).unwrap().unwrap();
        assert!(a.needs("libmpich.so.12") || a.needs("libmpi.so.12"), "{a:?}");
        assert!(a.needs("libc.so.6"));
        assert!(!a.has_rpath, "{a:?}");
        let b = read_dyn_info(&rpath).unwrap().unwrap();
        assert!(b.has_rpath, "{b:?}");
        assert_eq!(b.rpath, vec!["/usr/lib/x86_64-linux-gnu".to_string()]);
        assert!(a.rpath.is_empty());
        assert_eq!(a.needed, b.needed);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
