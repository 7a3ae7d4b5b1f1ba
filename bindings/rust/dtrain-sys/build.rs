//! Tells rustc where libdtrain.so is and to link it.
//!
//! `DTRAIN_LIB_DIR` names the folder holding libdtrain.so (a build tree's
//! `capi/` or an install prefix's `lib/`). Without it, pkg-config's `dtrain`
//! package is asked for its libdir when pkg-config is available; otherwise the
//! linker's default search path must find the library.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DTRAIN_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");

    let dir = match env::var("DTRAIN_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => Some(dir),
        _ => pkg_config_libdir(),
    };
    if let Some(dir) = dir {
        println!("cargo:rustc-link-search=native={dir}");
        // Dependent crates read it as DEP_DTRAIN_LIB_DIR.
        println!("cargo:lib_dir={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=dtrain");
}

/// The libdir of the installed `dtrain` pkg-config package, if there is one.
fn pkg_config_libdir() -> Option<String> {
    let output = Command::new("pkg-config")
        .args(["--variable=libdir", "dtrain"])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let dir = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (!dir.is_empty()).then_some(dir)
}
