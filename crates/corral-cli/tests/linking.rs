//! The `corral` binary is linked as its build script decided (`build.rs`): where it found
//! a static C library that links and runs, a static position-independent executable that
//! names no loader and needs no shared library; where it did not, a dynamic one with its
//! loader. Read from the binary's own ELF headers.

const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const ET_DYN: u16 = 3;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;

/// What the headers of an x86-64 or aarch64 ELF binary say about its linking.
#[derive(Debug)]
struct Linking {
    position_independent: bool,
    interpreter: bool,
    needed: usize,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn linking(binary: &[u8]) -> Linking {
    assert_eq!(&binary[..4], b"\x7fELF", "not an ELF file");
    assert_eq!(binary[4], 2, "not a 64-bit ELF file");
    assert_eq!(binary[5], 1, "not a little-endian ELF file");
    let (phoff, phentsize, phnum) = (
        u64_at(binary, 0x20) as usize,
        u16_at(binary, 0x36) as usize,
        u16_at(binary, 0x38) as usize,
    );
    let mut interpreter = false;
    let mut needed = 0;
    for i in 0..phnum {
        let header = phoff + i * phentsize;
        match u32_at(binary, header) {
            PT_INTERP => interpreter = true,
            PT_DYNAMIC => {
                let (offset, size) = (
                    u64_at(binary, header + 8) as usize,
                    u64_at(binary, header + 32) as usize,
                );
                for entry in binary[offset..offset + size].chunks_exact(16) {
                    match u64_at(entry, 0) {
                        DT_NULL => break,
                        DT_NEEDED => needed += 1,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Linking {
        position_independent: u16_at(binary, 0x10) == ET_DYN,
        interpreter,
        needed,
    }
}

#[test]
fn the_binary_is_linked_as_the_build_script_decided() {
    let binary = std::fs::read(env!("CARGO_BIN_EXE_corral")).unwrap();
    let linked = linking(&binary);
    match env!("CORRAL_LINKED") {
        "static-pie" => {
            assert!(
                linked.position_independent,
                "a static corral must still be loaded at a random address: {linked:?}"
            );
            assert!(
                !linked.interpreter && linked.needed == 0,
                "the build script linked corral statically, but it names a loader or a shared library: {linked:?}"
            );
        }
        "dynamic" => assert!(linked.interpreter && linked.needed > 0, "{linked:?}"),
        // A cross build, or a target that links statically by itself: linked as Rust's
        // defaults say, which this test does not second-guess.
        how => assert_eq!(how, "by-target", "an unknown linking: {linked:?}"),
    }
}
