//! Builds the first-party plugins in `plugins/` for `wasm32-wasip2` and writes the list of
//! the ones embedded in the binary (tools and providers) to `$OUT_DIR/embedded_plugins.rs`.
//!
//! The plugins have their own cargo workspace and target directory, so building them from
//! here neither waits on this build's lock nor rebuilds them per profile.
//!
//! The embedded components are also compiled to native code here, with the same code-generation
//! settings as the runtime's engine (`src/plugin_host/codegen.rs`), so the first start on an
//! empty compile cache runs them without compiling. When precompiling fails (a target Cranelift
//! does not support), the component is embedded without it and compiled at run time instead.
//! Their `describe()` answers are read here too (`build/describe.rs`), and the `pith-sdk`
//! crate is packed for `pith plugin new` (`build/sdk_package.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "src/plugin_host/codegen.rs"]
mod codegen;
#[path = "build/describe.rs"]
mod describe;
#[path = "build/preinit.rs"]
mod preinit;
#[path = "build/sdk_package.rs"]
mod sdk_package;

const TARGET: &str = "wasm32-wasip2";
/// The plugin groups embedded in the binary (the tools, the providers, and the engine codemode
/// scripts run in); `examples/` and `testing/` are built but not embedded.
const EMBEDDED_GROUPS: &[&str] = &["tools", "providers", "engines"];

fn main() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .parent()
        .expect("runtime/ has a parent")
        .to_path_buf();
    let plugins = root.join("plugins");
    for watched in ["plugins", "sdk", "wit"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    println!("cargo:rerun-if-env-changed=PITH_SKIP_PLUGIN_BUILD");

    pack_relative_relocations();
    order_startup_functions();
    sdk_package::write(&root, &PathBuf::from(env("OUT_DIR")));
    let target_dir = plugin_target_dir(&root);
    ensure_wasm_target();
    build_plugins(&plugins, &target_dir);

    let out_dir = target_dir.join(TARGET).join("release");
    let precompiled_dir = PathBuf::from(env("OUT_DIR")).join("precompiled");
    std::fs::create_dir_all(&precompiled_dir).expect("create $OUT_DIR/precompiled");
    let precompiler = precompiler();
    let mut entries = String::new();
    for group in EMBEDDED_GROUPS {
        for crate_dir in plugin_crates(&plugins.join(group)) {
            entries.push_str(&embedded_entry(
                group,
                &crate_dir,
                &out_dir,
                precompiler.as_ref(),
                &precompiled_dir,
            ));
        }
    }
    let generated = format!(
        "/// The first-party plugins built from `plugins/` and embedded in the binary.\n\
         pub static EMBEDDED_PLUGINS: &[EmbeddedPlugin] = &[\n{entries}];\n\
         /// Where the build put every first-party component (examples and test plugins too).\n\
         pub const BUILT_PLUGINS_DIR: &str = {:?};\n",
        out_dir.display().to_string()
    );
    std::fs::write(
        PathBuf::from(env("OUT_DIR")).join("embedded_plugins.rs"),
        generated,
    )
    .expect("write embedded_plugins.rs");
}

/// Links the `pith` binary with packed relative relocations (`DT_RELR`) when the linker and
/// this machine's glibc (2.36 and later) support them: the loader then reads a few kilobytes
/// of relocations at start instead of more than a megabyte, which shows in the start time and
/// the resident memory. Only the binary is linked so (the tests and dependencies are not).
fn pack_relative_relocations() {
    let target = env("TARGET");
    if !target.ends_with("linux-gnu") || target != env("HOST") {
        return;
    }
    let linker_has_it = Command::new("ld")
        .arg("--help")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("pack-relative-relocs"));
    let glibc = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()
        .and_then(|out| {
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let version = text.trim().strip_prefix("glibc ")?.to_string();
            let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
            Some((parts.next()??, parts.next()??))
        });
    if linker_has_it && glibc.is_some_and(|version| version >= (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Links the functions the start runs next to each other (`startup-order.txt`, made by
/// `bench/startup_order.py`), when the linker is rustc's own LLD (the default for this target
/// since Rust 1.90): the kernel maps 64 KB of the binary around each page the start touches, so
/// the start-up code scattered through 20 MB of code kept several megabytes resident. Names
/// the binary no longer has are skipped; a stale list only costs memory, never correctness.
fn order_startup_functions() {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let list = manifest.join("startup-order.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    let lld_by_default = env("TARGET") == "x86_64-unknown-linux-gnu"
        && std::env::var("CARGO_ENCODED_RUSTFLAGS")
            .map(|flags| !flags.contains("linker") && !flags.contains("fuse-ld"))
            .unwrap_or(true)
        && std::env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_none()
        && rustc_minor().is_some_and(|minor| minor >= 90);
    if lld_by_default && list.exists() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            list.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// The minor version of the rustc building this (1.x).
fn rustc_minor() -> Option<u32> {
    let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.split_whitespace()
        .nth(1)?
        .split('.')
        .nth(1)?
        .parse()
        .ok()
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("cargo sets {name}"))
}

/// `$CARGO_TARGET_DIR/wasm-plugins`, or `<root>/target/wasm-plugins`.
fn plugin_target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("wasm-plugins")
}

/// Installs the wasm32-wasip2 target with rustup when the toolchain lacks it.
fn ensure_wasm_target() {
    let sysroot = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|s| PathBuf::from(s.trim()));
    if let Some(sysroot) = &sysroot
        && sysroot.join("lib/rustlib").join(TARGET).exists()
    {
        return;
    }
    println!(
        "cargo:warning=installing the {TARGET} target with rustup (needed to build the plugins)"
    );
    let status = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status();
    match status {
        Ok(status) if status.success() => {}
        Ok(status) => panic!(
            "`rustup target add {TARGET}` failed ({status}). pith's plugins are WebAssembly \
             components and need this target: install it by hand and build again."
        ),
        Err(err) => panic!(
            "cannot run rustup to install the {TARGET} target ({err}). Install the target for \
             your toolchain by hand (e.g. `rustup target add {TARGET}`) and build again."
        ),
    }
}

fn build_plugins(plugins: &Path, target_dir: &Path) {
    if std::env::var_os("PITH_SKIP_PLUGIN_BUILD").is_some() {
        return;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["build", "--release", "--target", TARGET, "--manifest-path"])
        .arg(plugins.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir);
    // Settings meant for the outer (native) build must not leak into the guest build.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let outer = key.starts_with("CARGO_") && key != "CARGO_HOME" && key != "CARGO_NET_OFFLINE";
        if outer || key == "RUSTFLAGS" || key == "RUSTC_WRAPPER" || key == "RUSTC_WORKSPACE_WRAPPER"
        {
            command.env_remove(&key);
        }
    }
    let status = command.status().expect("run cargo to build the plugins");
    assert!(
        status.success(),
        "building the plugins in {} failed",
        plugins.display()
    );
}

/// The crates (directories with a Cargo.toml) directly under `group`, sorted.
fn plugin_crates(group: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(group) else {
        return Vec::new();
    };
    let mut crates: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.join("Cargo.toml").exists())
        .collect();
    crates.sort();
    crates
}

/// The engine that precompiles the embedded components for the build's target, or none (with
/// a warning) when Cranelift cannot target it.
fn precompiler() -> Option<wasmtime::Engine> {
    let mut config = wasmtime::Config::new();
    codegen::configure_codegen(&mut config);
    let target = env("TARGET");
    if target != env("HOST")
        && let Err(err) = config.target(&target)
    {
        println!("cargo:warning=not precompiling the plugins for {target}: {err}");
        return None;
    }
    match wasmtime::Engine::new(&config) {
        Ok(engine) => Some(engine),
        Err(err) => {
            println!("cargo:warning=not precompiling the plugins: {err}");
            None
        }
    }
}

/// Compiles `wasm` to `<dir>/<name>.cwasm` and returns that path, or none (with a warning).
fn precompile(engine: &wasmtime::Engine, name: &str, wasm: &[u8], dir: &Path) -> Option<PathBuf> {
    let path = dir.join(format!("{name}.cwasm"));
    match engine.precompile_component(wasm) {
        Ok(code) => {
            std::fs::write(&path, code)
                .unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
            Some(path)
        }
        Err(err) => {
            println!("cargo:warning=not precompiling {name}: {err}");
            None
        }
    }
}

/// One `EmbeddedPlugin { … }` entry for the crate at `crate_dir`.
fn embedded_entry(
    group: &str,
    crate_dir: &Path,
    out_dir: &Path,
    precompiler: Option<&wasmtime::Engine>,
    precompiled_dir: &Path,
) -> String {
    let manifest = crate_dir.join("pith.toml");
    assert!(
        manifest.exists(),
        "{} has no pith.toml manifest",
        crate_dir.display()
    );
    let cargo_toml =
        std::fs::read_to_string(crate_dir.join("Cargo.toml")).expect("read Cargo.toml");
    let name = cargo_toml
        .lines()
        .find_map(|line| {
            line.trim()
                .strip_prefix("name = ")
                .map(|v| v.trim_matches('"').to_string())
        })
        .expect("Cargo.toml has a package name");
    let mut wasm = out_dir.join(format!("{}.wasm", name.replace('-', "_")));
    let mut bytes =
        std::fs::read(&wasm).unwrap_or_else(|err| panic!("read {}: {err}", wasm.display()));
    // The script engine starts from its pre-initialized state (build/preinit.rs).
    // (Only for the machine building: the state is made by running the component.)
    if group == "engines"
        && env("TARGET") == env("HOST")
        && let Some(engine) = precompiler
    {
        match preinit::preinitialize(engine, &bytes) {
            Ok(initialized) => {
                wasm = precompiled_dir.join(format!("{name}.initialized.wasm"));
                std::fs::write(&wasm, &initialized)
                    .unwrap_or_else(|err| panic!("write {}: {err}", wasm.display()));
                bytes = initialized;
            }
            Err(err) => println!("cargo:warning={name} is not pre-initialized: {err}"),
        }
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    let precompiled_path =
        precompiler.and_then(|engine| precompile(engine, &name, &bytes, precompiled_dir));
    let precompiled = precompiled_path.as_ref().map_or_else(
        || "&[]".to_string(),
        |path| format!("include_bytes!({:?})", path.display().to_string()),
    );
    let described = match (precompiler, &precompiled_path) {
        // An engine describes nothing.
        _ if group == "engines" => "{}".to_string(),
        (Some(engine), Some(path)) => {
            let code =
                std::fs::read(path).unwrap_or_else(|err| panic!("read {}: {err}", path.display()));
            describe::describe(engine, group, &code).unwrap_or_else(|err| {
                println!("cargo:warning={name} is described at run time: {err}");
                String::new()
            })
        }
        _ => String::new(),
    };
    format!(
        "    EmbeddedPlugin {{ name: {name:?}, manifest: include_str!({:?}), wasm: include_bytes!({:?}), precompiled: {precompiled}, described: {described:?}, hash: {hash:?} }},\n",
        manifest.display().to_string(),
        wasm.display().to_string(),
    )
}
