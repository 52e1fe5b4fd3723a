//! `main` of a stripped PIE, found from its entry point.
//!
//! glibc's `_start` (crt1.o/Scrt1.o, the same whichever compiler links: gcc, clang, gfortran)
//! calls `__libc_start_main(main, argc, argv, init, fini, rtld_fini, stack_end)`, loading `main`
//! into `%rdi` with a RIP-relative `lea main(%rip),%rdi`, or, before the linker relaxes it,
//! `mov main@GOTPCREL(%rip),%rdi` (then the GOT slot's relocation or content gives `main`). We
//! decode the few instructions such a `_start` holds, up to its call, and accept nothing else:
//! an entry point we do not recognise is a refusal, never a guess.

use super::{u64_at, vaddr_to_off, Phdr, DT_RELA, DT_RELASZ, DT_SYMTAB, PF_X, PT_LOAD, R_X86_64_GLOB_DAT};

const R_X86_64_64: u32 = 1;
const R_X86_64_RELATIVE: u32 = 8;
/// `_start` is a dozen instructions; glibc's is 43 bytes up to its call.
const MAX_START_BYTES: usize = 96;

/// Where the last write to `%rdi` took `main` from.
#[derive(Debug)]
enum Rdi {
    /// `lea disp(%rip),%rdi`: this address.
    Address(u64),
    /// `mov disp(%rip),%rdi`: the pointer stored at this address (a GOT slot).
    Slot(u64),
}

/// `st_value` of `main` (link-time address) of the PIE image `b`, decoded from its `_start`.
pub(super) fn main_from_start(b: &[u8], ph: &[Phdr], dynamic: &[(i64, u64)]) -> Result<u64, String> {
    let entry = u64_at(b, 0x18).ok_or("truncated ELF header")?;
    let seg = ph
        .iter()
        .find(|p| p.p_type == PT_LOAD && p.p_flags & PF_X != 0 && entry >= p.p_vaddr && entry - p.p_vaddr < p.p_filesz)
        .ok_or("the entry point is not in an executable segment")?;
    let avail = (seg.p_vaddr + seg.p_filesz - entry).min(MAX_START_BYTES as u64);
    let off = vaddr_to_off(ph, entry, avail).ok_or("the entry point is outside the file")? as usize;
    let code = b.get(off..off + avail as usize).ok_or("the entry point is outside the file")?;
    match decode(code, entry)? {
        Rdi::Address(a) => Ok(a),
        Rdi::Slot(slot) => slot_value(b, ph, dynamic, slot),
    }
}

/// Walks `_start` (at link-time address `at`) up to its call and returns the source of `%rdi`.
fn decode(code: &[u8], at: u64) -> Result<Rdi, String> {
    let mut i = 0;
    let mut rdi = None;
    while i < code.len() {
        let rest = &code[i..];
        let rip_rel = |len: usize| -> Option<u64> {
            let d = i32::from_le_bytes(rest.get(len - 4..len)?.try_into().ok()?);
            Some((at + (i + len) as u64).wrapping_add(d as i64 as u64))
        };
        let len = match rest {
            [0xf3, 0x0f, 0x1e, 0xfa, ..] => 4,        // endbr64
            [0x31, 0xed, ..] | [0x31, 0xc9, ..] => 2, // xor %ebp,%ebp / xor %ecx,%ecx
            [0x45, 0x31, 0xc0, ..] => 3,              // xor %r8d,%r8d
            [0x49, 0x89, 0xd1, ..] => 3,              // mov %rdx,%r9
            [0x48, 0x89, 0xe2, ..] => 3,              // mov %rsp,%rdx
            [0x48, 0x83, 0xe4, 0xf0, ..] => 4,        // and $-16,%rsp
            [0x5e, ..] | [0x50, ..] | [0x54, ..] => 1, // pop %rsi / push %rax / push %rsp
            // lea or mov disp(%rip) into %r8 or %rcx: init and fini (glibc before 2.34)
            [0x4c, 0x8d | 0x8b, 0x05, ..] | [0x48, 0x8d | 0x8b, 0x0d, ..] => 7,
            [0x48, 0x8d, 0x3d, ..] => {
                rdi = Some(Rdi::Address(rip_rel(7).ok_or("truncated _start")?));
                7
            }
            [0x48, 0x8b, 0x3d, ..] => {
                rdi = Some(Rdi::Slot(rip_rel(7).ok_or("truncated _start")?));
                7
            }
            // call *disp(%rip) or call rel32: __libc_start_main
            [0xff, 0x15, ..] | [0xe8, ..] => {
                return rdi.ok_or_else(|| "its _start calls without loading main into %rdi".to_string());
            }
            [op, ..] => return Err(format!("its entry code is not a glibc _start (byte {op:#04x} at offset {i})")),
            [] => break,
        };
        i += len;
    }
    Err("its _start makes no call in its first bytes".into())
}

/// The pointer a GOT slot holds once relocated: from its `DT_RELA` relocation (`R_X86_64_RELATIVE`
/// addend, or a defined symbol's value), else the slot's content in the file (`DT_RELR`).
fn slot_value(b: &[u8], ph: &[Phdr], dynamic: &[(i64, u64)], slot: u64) -> Result<u64, String> {
    let get = |tag: i64| dynamic.iter().find(|(t, _)| *t == tag).map(|&(_, v)| v);
    if let (Some(rela), Some(relasz)) = (get(DT_RELA), get(DT_RELASZ)) {
        let rela = vaddr_to_off(ph, rela, relasz).ok_or("DT_RELA outside the file")?;
        for i in 0..relasz / 24 {
            let o = rela + i * 24;
            let (Some(r_offset), Some(info), Some(addend)) = (u64_at(b, o), u64_at(b, o + 8), u64_at(b, o + 16)) else {
                return Err("truncated relocations".into());
            };
            if r_offset != slot {
                continue;
            }
            return match info as u32 {
                R_X86_64_RELATIVE => Ok(addend),
                R_X86_64_GLOB_DAT | R_X86_64_64 => {
                    let symtab = get(DT_SYMTAB).ok_or("relocation without a symbol table")?;
                    let sym = (info >> 32).checked_mul(24).and_then(|s| s.checked_add(symtab)).ok_or("bad relocation")?;
                    let sym = vaddr_to_off(ph, sym, 24).ok_or("relocation symbol outside the file")?;
                    let shndx = super::u16_at(b, sym + 6).ok_or("truncated dynamic symbols")?;
                    let value = u64_at(b, sym + 8).ok_or("truncated dynamic symbols")?;
                    if shndx == 0 {
                        return Err("main's GOT slot names a symbol the program does not define".into());
                    }
                    let add = if info as u32 == R_X86_64_64 { addend } else { 0 };
                    Ok(value.wrapping_add(add))
                }
                t => Err(format!("main's GOT slot has relocation type {t}")),
            };
        }
    }
    let off = vaddr_to_off(ph, slot, 8).ok_or("main's GOT slot is outside the file")?;
    match u64_at(b, off) {
        Some(v) if v != 0 => Ok(v),
        _ => Err("main's GOT slot is empty".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// glibc 2.36's Scrt1 `_start` (Debian 12's /bin/ls): lea main(%rip),%rdi.
    const START_236: &[u8] = &[
        0x31, 0xed, 0x49, 0x89, 0xd1, 0x5e, 0x48, 0x89, 0xe2, 0x48, 0x83, 0xe4, 0xf0, 0x50, 0x54, 0x45, 0x31, 0xc0, 0x31,
        0xc9, 0x48, 0x8d, 0x3d, 0x45, 0xe5, 0xff, 0xff, 0xff, 0x15, 0x9f, 0xdd, 0x01, 0x00, 0xf4,
    ];

    #[test]
    fn decodes_glibc_start() {
        match decode(START_236, 0x61d0).unwrap() {
            Rdi::Address(a) => assert_eq!(a, 0x4730),
            Rdi::Slot(_) => panic!("lea decoded as mov"),
        }
        // Before glibc 2.34: init and fini in %rcx and %r8, endbr64 first; main through the GOT.
        let old = [
            0xf3, 0x0f, 0x1e, 0xfa, 0x31, 0xed, 0x49, 0x89, 0xd1, 0x5e, 0x48, 0x89, 0xe2, 0x48, 0x83, 0xe4, 0xf0, 0x50, 0x54,
            0x4c, 0x8d, 0x05, 0xba, 0x09, 0x00, 0x00, 0x48, 0x8d, 0x0d, 0x53, 0x09, 0x00, 0x00, 0x48, 0x8b, 0x3d, 0x10,
            0x00, 0x00, 0x00, 0xff, 0x15, 0x16, 0x47, 0x00, 0x00, 0xf4,
        ];
        match decode(&old, 0x1000).unwrap() {
            Rdi::Slot(s) => assert_eq!(s, 0x1000 + 40 + 0x10),
            Rdi::Address(_) => panic!("mov decoded as lea"),
        }
    }

    #[test]
    fn refuses_unknown_entry_code() {
        // musl's _start: xor %rbp,%rbp; mov %rsp,%rdi; ...
        assert!(decode(&[0x48, 0x31, 0xed, 0x48, 0x89, 0xe7], 0).unwrap_err().contains("not a glibc _start"));
        // A call before %rdi was loaded.
        assert!(decode(&[0x31, 0xed, 0xe8, 0, 0, 0, 0], 0).unwrap_err().contains("without loading main"));
        // Truncated in the middle of the lea, or no call at all.
        assert!(decode(&START_236[..23], 0).is_err());
        assert!(decode(&START_236[..20], 0).is_err());
        assert!(decode(&[], 0).is_err());
    }
}
