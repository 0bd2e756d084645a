//! How `corral` is linked, for a start that costs a short-lived process less.
//!
//! A command-line call is a whole process, so what happens before `main` is paid at every
//! call (BENCHMARKS.md). Where corral is built for the machine that builds it, on Linux
//! with glibc, this script makes three changes to how the `corral` binary is linked. Each
//! is probed first; where a probe fails, that part links as Rust's defaults say.
//!
//! - **A static position-independent executable** (`-static-pie`): the C library and the
//!   math library are linked in from their static archives, so no loader maps them and
//!   binds some 200 symbols at each start (about 250 µs of a `corral exec` on a virtual
//!   machine). It stays position-independent, so it is still loaded at a random address.
//!   This is what `-C target-feature=+crt-static` does, but cargo cannot give that flag
//!   to one binary: without `--target`, it would reach the proc-macros, which cannot be
//!   built that way. So this script puts a `libc.a` and a `libm.a` into a search
//!   directory of the binary's own. Each is a linker script naming the real archive
//!   (`GROUP(...)`). The linker takes the first directory that has a library of the name,
//!   so the `-lc` and `-lm` that Rust asks for resolve to the archives. A Rust program
//!   linked the same way is built and run first: its threads, unwinding and relocated
//!   data must work, and no shared library may be mapped in it. glibc's static archive
//!   still resolves host names from `/etc/hosts` and DNS, as a shared one does.
//! - **The C unwinder linked in**, instead of loaded as `libgcc_s.so.1` at every start.
//!   The shared unwinder's constructor probes the processor with `cpuid`, which traps to
//!   the hypervisor on a virtual machine: about 150 µs. Rust's standard library on
//!   `*-linux-gnu` asks for `-lgcc_s`; the same unwinder ships as a static archive,
//!   `libgcc_eh.a`. A `libgcc_s.a` in a search directory (`INPUT(...)`) names it, for
//!   every target of this package, its tests included. Panics unwind and backtraces print
//!   exactly as before.
//! - **Packed relative relocations** (`-z pack-relative-relocs`, `DT_RELR`): the 30,000
//!   relative relocations of a position-independent binary are applied from a bitmap of
//!   a few kilobytes instead of a 700 KB table read through at every start. Only where
//!   the linker and the C library (glibc 2.36) both handle them.
//!
//! The static link needs the SQLite that `.cargo/config.toml`'s `[env]` asks for: built
//! without loadable extensions, so that it never calls `dlopen`, which a static glibc
//! binary cannot honour. That file applies only to builds in this repository; a build
//! from a package (`cargo install corral-cli`) gets rusqlite's default SQLite, and then
//! corral links dynamically (the unwinder and packed relocations still apply).
//!
//! A binary linked with the last two, or dynamically against a newer glibc, needs that
//! glibc where it runs; the static one needs none. A cross build links as Rust's
//! defaults say, and so does a build for a target that already asks for `crt-static`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CC");
    println!("cargo::rerun-if-env-changed={SQLITE_FLAGS}");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let static_crt = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|features| features.split(',').any(|f| f == "crt-static"));
    // How the binary ended up linked, for the test that checks it (`tests/linking.rs`).
    let linked = |how: &str| println!("cargo::rustc-env=CORRAL_LINKED={how}");
    if target_os != "linux" || target_env != "gnu" || static_crt {
        linked("by-target");
        return;
    }
    // The probes run this machine's C compiler and Rust compiler, and then what they link.
    if std::env::var("HOST").ok() != std::env::var("TARGET").ok() {
        linked("by-target");
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let relr = packs_relative_relocations(&out, &cc);
    if relr {
        println!("cargo::rustc-link-arg-bins={RELR}");
    }
    let Some(unwinder) = archive(&cc, "libgcc_eh.a") else {
        println!(
            "cargo::warning=no libgcc_eh.a beside the C compiler: corral loads libgcc_s.so.1 at start"
        );
        linked("dynamic");
        return;
    };
    let shared_unwinder = out.join("static-unwinder");
    let script = format!("INPUT({})\n", unwinder.display());
    write_library(&shared_unwinder, "libgcc_s.a", &script);
    println!(
        "cargo::rustc-link-search=native={}",
        shared_unwinder.display()
    );

    if !sqlite_without_dlopen() {
        linked("dynamic");
        return;
    }
    let static_libraries = out.join("static-c-library");
    if static_c_library(&static_libraries, &cc, &unwinder)
        && links_static(&out, &shared_unwinder, &static_libraries, relr)
    {
        println!(
            "cargo::rustc-link-arg-bins=-L{}",
            static_libraries.display()
        );
        println!("cargo::rustc-link-arg-bins=-static-pie");
        linked("static-pie");
    } else {
        println!(
            "cargo::warning=corral is linked against the shared C library: no static one \
             (libc.a, libm.a) that links and runs here"
        );
        linked("dynamic");
    }
}

/// The variable rusqlite's build reads SQLite's compile-time options from.
const SQLITE_FLAGS: &str = "LIBSQLITE3_FLAGS";

/// Whether the SQLite built beside corral leaves loadable extensions (`dlopen`) out, as
/// `.cargo/config.toml` asks; a build from a package does not read that file.
fn sqlite_without_dlopen() -> bool {
    std::env::var(SQLITE_FLAGS).is_ok_and(|flags| {
        flags
            .split_whitespace()
            .any(|f| f == "-DSQLITE_OMIT_LOAD_EXTENSION")
    })
}

/// The linker flag that packs relative relocations.
const RELR: &str = "-Wl,-z,pack-relative-relocs";

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
        .args(["-pie", "-fPIE", RELR, "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .is_ok_and(|o| o.status.success() && o.stderr.is_empty());
    linked && Command::new(&program).status().is_ok_and(|s| s.success())
}

/// Writes into `dir` the search directory's `libc.a` and `libm.a`: linker scripts that
/// name the static archives `cc` finds. The C library's group also holds the unwinder
/// and `libgcc.a`, which its archive calls into, as `crt-static` links them. False where
/// an archive is missing.
fn static_c_library(dir: &Path, cc: &OsStr, unwinder: &Path) -> bool {
    let (Some(libc), Some(libm), Some(libgcc)) = (
        archive(cc, "libc.a"),
        archive(cc, "libm.a"),
        archive(cc, "libgcc.a"),
    ) else {
        return false;
    };
    let group = format!(
        "GROUP({} {} {})\n",
        libc.display(),
        unwinder.display(),
        libgcc.display()
    );
    write_library(dir, "libc.a", &group);
    write_library(dir, "libm.a", &format!("INPUT({})\n", libm.display()));
    true
}

/// Whether a Rust program, linked as `corral` is to be, builds and runs statically here:
/// it starts a thread, catches a panic, reads a relocated pointer and finds neither the
/// loader nor the shared C library mapped into itself.
fn links_static(out: &Path, unwinder: &Path, libraries: &Path, relr: bool) -> bool {
    let (source, program) = (out.join("static-probe.rs"), out.join("static-probe"));
    let probe = r#"
static GREETING: &str = "static";
fn main() {
    std::panic::set_hook(Box::new(|_| {}));
    let unwound = std::panic::catch_unwind(|| panic!("probe")).is_err();
    let joined = std::thread::spawn(|| 2).join().is_ok_and(|n| n == 2);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let shared = maps.contains("/libc.so") || maps.contains("/ld-linux");
    if unwound && joined && !shared {
        print!("{GREETING}");
    }
}
"#;
    if std::fs::write(&source, probe).is_err() {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut compile = Command::new(rustc);
    compile
        .args(["--edition=2021", "--crate-type=bin", "-o"])
        .arg(&program)
        .arg(&source)
        .arg("-L")
        .arg(unwinder)
        .arg(format!("-Clink-arg=-L{}", libraries.display()))
        .arg("-Clink-arg=-static-pie");
    if relr {
        compile.arg(format!("-Clink-arg={RELR}"));
    }
    // The flags cargo passes to every crate of this build, a linker among them.
    if let Ok(flags) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        compile.args(flags.split('\x1f').filter(|flag| !flag.is_empty()));
    }
    if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
        compile
            .arg("-C")
            .arg(format!("linker={}", linker.to_string_lossy()));
    }
    let built = compile.output().is_ok_and(|o| o.status.success());
    built
        && Command::new(&program)
            .output()
            .is_ok_and(|o| o.status.success() && o.stdout == b"static")
}

/// Writes `text` as the library `name` in the search directory `dir`.
fn write_library(dir: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir).expect("creating a library search directory");
    std::fs::write(dir.join(name), text).expect("writing a library's linker script");
}

/// The static archive `name` as `cc`, the C compiler that links corral, finds it, if it
/// has one.
fn archive(cc: &OsStr, name: &str) -> Option<PathBuf> {
    let output = Command::new(cc)
        .arg(format!("-print-file-name={name}"))
        .output()
        .ok()?;
    let path = String::from_utf8(output.stdout).ok()?;
    let path = Path::new(path.trim());
    // Without the file, the compiler prints the bare name back.
    (output.status.success() && path.is_absolute() && path.is_file()).then(|| path.to_path_buf())
}
