//! How `corral` is linked, for a start that costs a short-lived process less.
//!
//! The C unwinder is linked in instead of loaded as `libgcc_s.so.1` at every start.
//! Rust's standard library on `*-linux-gnu` asks the linker for `-lgcc_s`, the shared
//! unwinder. Loading it costs each process an extra library to map and relocate, and its
//! constructor probes the processor with `cpuid`, which traps to the hypervisor on a
//! virtual machine: together about 150 µs of every `corral exec` (BENCHMARKS.md). The
//! same unwinder ships as a static archive, `libgcc_eh.a`, which is what the standard
//! library itself links for `crt-static` targets. So, where the C compiler has one, this
//! script puts a `libgcc_s.a` into a search directory of its own that names it
//! (`INPUT(-lgcc_eh)`, a linker script): the linker takes the first directory that has a
//! `gcc_s` library, this one, and panics unwind and backtraces print exactly as before.
//! Where there is no `libgcc_eh.a`, nothing changes.
//!
//! It also packs the binary's relative relocations (`-z pack-relative-relocs`, `DT_RELR`):
//! the loader applies the 30,000 of them from a bitmap of a few kilobytes instead of a
//! 700 KB table it reads through at every start. Only where the linker and the C library
//! (glibc 2.36) both handle them: a test program is linked with the flag and run first.
//! Such a binary then needs glibc 2.36 where it runs, as one linked against a newer glibc
//! generally needs that glibc.
//!
//! Both only when corral is built for the machine that builds it, with its C compiler
//! (`CC`, else `cc`): a cross build links as Rust's defaults say.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CC");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let static_crt = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|features| features.split(',').any(|f| f == "crt-static"));
    if target_os != "linux" || target_env != "gnu" || static_crt {
        return;
    }
    // The probes run this machine's C compiler, and the second runs what it links.
    if std::env::var("HOST").ok() != std::env::var("TARGET").ok() {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    if packs_relative_relocations(&out, &cc) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let Some(archive) = static_unwinder(&cc) else {
        println!(
            "cargo::warning=no libgcc_eh.a beside the C compiler: corral loads libgcc_s.so.1 at start"
        );
        return;
    };
    let dir = out.join("static-unwinder");
    std::fs::create_dir_all(&dir).expect("creating the static unwinder's directory");
    let script = format!("INPUT({})\n", archive.display());
    std::fs::write(dir.join("libgcc_s.a"), script).expect("writing the unwinder's script");
    println!("cargo::rustc-link-search=native={}", dir.display());
}

/// Whether a program linked with `-z pack-relative-relocs` by `cc`, the C compiler that
/// links corral, builds (in `out`) and runs here.
fn packs_relative_relocations(out: &Path, cc: &OsStr) -> bool {
    let (source, program) = (out.join("relr-probe.c"), out.join("relr-probe"));
    // A pointer in initialised data: a relative relocation for the loader to apply.
    let probe = "static int x; int *p = &x; int main(void) { return p == &x ? 0 : 1; }\n";
    if std::fs::write(&source, probe).is_err() {
        return false;
    }
    let linked = Command::new(cc)
        .args(["-pie", "-fPIE", "-Wl,-z,pack-relative-relocs", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .is_ok_and(|o| o.status.success() && o.stderr.is_empty());
    linked && Command::new(&program).status().is_ok_and(|s| s.success())
}

/// `libgcc_eh.a` as `cc`, the C compiler that links corral, finds it, if it has one.
fn static_unwinder(cc: &OsStr) -> Option<PathBuf> {
    let output = Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()?;
    let path = String::from_utf8(output.stdout).ok()?;
    let path = Path::new(path.trim());
    // Without the file, the compiler prints the bare name back.
    (output.status.success() && path.is_absolute() && path.is_file()).then(|| path.to_path_buf())
}
