//! What a sandboxed command sees of the machine: the system's programs and libraries, the few
//! files of `/etc` that programs read to start (never `shadow`, `ssh/` or `ssl/private`), and
//! its Python environment with the interpreter that environment was made from — all read-only.
//! Nothing else of the machine is there: no home folder (the user's or anyone's), no `/var`,
//! `/opt`, `/srv`, `/mnt` or `/work`, so keys, shell history and other repositories stay out
//! of reach. The command's own copy and a private `/tmp` are added by [`super::isolate`].

use std::fs;
use std::path::{Component, Path, PathBuf};

use super::PythonEnv;

/// How one top-level path appears in the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mount {
    /// The host's folder or file at the same path, read-only.
    ReadOnly(PathBuf),
    /// A symbolic link `path → target`, as the host has it (`/bin → usr/bin` on merged-/usr
    /// systems).
    Symlink { path: PathBuf, target: String },
}

/// The system folders, shown as the host has them (a folder, or a link into `/usr`).
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// The entries of `/etc` programs read to start and run: the dynamic linker's cache, Debian's
/// alternatives (many `/usr/bin` programs are links through them), names of the local host
/// (tests that serve on `localhost`), users and groups by name (world-readable; no password
/// hashes), time zone, MIME types, locale aliases, fonts, terminfo, libmagic, XML catalogues, the
/// system Python's own configuration, and public CA certificates.
const ETC: &[&str] = &[
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "hosts",
    "host.conf",
    "nsswitch.conf",
    "gai.conf",
    "services",
    "protocols",
    "networks",
    "passwd",
    "group",
    "localtime",
    "timezone",
    "mime.types",
    "locale.alias",
    "os-release",
    "debian_version",
    "lsb-release",
    "fonts",
    "terminfo",
    "magic",
    "magic.mime",
    "xml",
    "ssl/certs",
    "ssl/openssl.cnf",
    "ca-certificates",
    "ca-certificates.conf",
];

/// Entries of `/etc` named by a prefix: the system Pythons' configuration (`python3`,
/// `python3.11`: Debian links `sitecustomize` there).
const ETC_PREFIXES: &[&str] = &["python"];

/// The CPU topology runtimes read to size their thread pools (nothing of the user's).
const SYS: &[&str] = &["/sys/devices/system/cpu"];

/// Why an environment cannot be shown to the sandbox.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error(
        "the Python environment at {prefix} would show {shown}, which holds the home folder \
         {home}: make the environment with an interpreter installed outside your home folder's \
         root (a virtualenv, pyenv or the system's Python all are)"
    )]
    HoldsHome {
        prefix: PathBuf,
        shown: PathBuf,
        home: PathBuf,
    },
}

/// The machine's system part as the sandbox shows it (without the Python environment).
pub fn system() -> Vec<Mount> {
    system_at(Path::new("/"))
}

/// [`system`] for a machine whose root is `root` (tests give a folder of theirs).
fn system_at(root: &Path) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for path in SYSTEM.iter().chain(SYS) {
        if let Some(mount) = mount_of(root, Path::new(path)) {
            mounts.push(mount);
        }
    }
    let etc = root.join("etc");
    let mut names: Vec<String> = ETC.iter().map(|name| name.to_string()).collect();
    if let Ok(entries) = fs::read_dir(&etc) {
        let mut prefixed: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
            .filter(|name| ETC_PREFIXES.iter().any(|p| name.starts_with(p)))
            .collect();
        prefixed.sort();
        names.extend(prefixed);
    }
    for name in names {
        if let Some(mount) = mount_of(root, &Path::new("/etc").join(name)) {
            mounts.push(mount);
        }
    }
    mounts
}

/// How `path` (absolute, as the sandbox sees it) of the machine rooted at `root` is shown: a link
/// as a link when it stays on the machine, anything else that exists read-only; `None` when
/// it is not there.
fn mount_of(root: &Path, path: &Path) -> Option<Mount> {
    let host = root.join(path.strip_prefix("/").unwrap_or(path));
    let meta = fs::symlink_metadata(&host).ok()?;
    if meta.file_type().is_symlink() {
        let target = fs::read_link(&host).ok()?;
        let target = target.to_str()?.to_string();
        // A relative link (`/bin → usr/bin`) is kept as a link; an absolute one is followed
        // and its target shown at the link's place (a link into a place the sandbox lacks
        // would dangle).
        if !target.starts_with('/') {
            return Some(Mount::Symlink {
                path: path.to_path_buf(),
                target,
            });
        }
        return fs::metadata(&host)
            .ok()
            .map(|_| Mount::ReadOnly(path.to_path_buf()));
    }
    Some(Mount::ReadOnly(path.to_path_buf()))
}

/// The folders of `env` a test needs, read-only: the environment itself and the installation
/// of the interpreter it was made from (a virtualenv's `pyvenv.cfg` `home`, and where its
/// `python` link leads), minus those the system part already shows.
pub fn python(env: &PythonEnv) -> Result<Vec<PathBuf>, ViewError> {
    let mut roots = vec![env.prefix.clone()];
    if let Some(home) = venv_home(&env.prefix) {
        roots.push(installation_of(&home));
    }
    if let Ok(real) = fs::canonicalize(&env.python)
        && let Some(bin) = real.parent()
    {
        roots.push(installation_of(bin));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut shown: Vec<PathBuf> = Vec::new();
    for root in roots {
        let root = normalized(&std::path::absolute(&root).unwrap_or(root));
        if SYSTEM.iter().any(|system| root.starts_with(system))
            || shown.iter().any(|s| root.starts_with(s))
        {
            continue;
        }
        // The user's home, root's, and any under `/home` (`/home/_` stands for them: a root
        // that holds it is `/home` or `/`).
        for guarded in home
            .iter()
            .map(PathBuf::as_path)
            .chain([Path::new("/root"), Path::new("/home/_")])
        {
            if guarded.starts_with(&root) {
                return Err(ViewError::HoldsHome {
                    prefix: env.prefix.clone(),
                    shown: root,
                    home: guarded.to_path_buf(),
                });
            }
        }
        shown.retain(|s| !s.starts_with(&root));
        shown.push(root);
    }
    Ok(shown)
}

/// A virtualenv's base interpreter folder (`home = …` in its `pyvenv.cfg`).
fn venv_home(prefix: &Path) -> Option<PathBuf> {
    let config = fs::read_to_string(prefix.join("pyvenv.cfg")).ok()?;
    config.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })
}

/// The installation a `bin` folder belongs to (its parent), or the folder itself.
fn installation_of(bin: &Path) -> PathBuf {
    match (bin.file_name(), bin.parent()) {
        (Some(name), Some(parent)) if name == "bin" && parent != Path::new("/") => {
            parent.to_path_buf()
        }
        _ => bin.to_path_buf(),
    }
}

/// `path` without `.` and `..` parts (lexically; the path need not exist).
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_part_keeps_links_and_names_only_the_listed_etc_files() {
        let root = tempfile::tempdir().expect("temp dir");
        let r = root.path();
        for dir in [
            "usr/bin",
            "usr/lib",
            "etc/ssl/certs",
            "etc/ssl/private",
            "etc/python3.11",
        ] {
            fs::create_dir_all(r.join(dir)).expect("mkdir");
        }
        std::os::unix::fs::symlink("usr/bin", r.join("bin")).expect("link");
        std::os::unix::fs::symlink("usr/lib", r.join("lib")).expect("link");
        for file in [
            "etc/passwd",
            "etc/shadow",
            "etc/hosts",
            "etc/ssl/private/key.pem",
        ] {
            fs::write(r.join(file), "x").expect("write");
        }
        let mounts = system_at(r);
        let ro = |p: &str| Mount::ReadOnly(PathBuf::from(p));
        assert_eq!(
            mounts,
            vec![
                ro("/usr"),
                Mount::Symlink {
                    path: "/bin".into(),
                    target: "usr/bin".into()
                },
                Mount::Symlink {
                    path: "/lib".into(),
                    target: "usr/lib".into()
                },
                ro("/etc/hosts"),
                ro("/etc/passwd"),
                ro("/etc/ssl/certs"),
                ro("/etc/python3.11"),
            ]
        );
    }

    #[test]
    fn a_virtualenv_shows_itself_and_its_base_interpreter_but_never_a_home() {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = dir.path().join("pythons/3.11");
        fs::create_dir_all(base.join("bin")).expect("mkdir");
        fs::write(base.join("bin/python3.11"), "").expect("write");
        let venv = dir.path().join("envs/repo");
        fs::create_dir_all(venv.join("bin")).expect("mkdir");
        fs::write(
            venv.join("pyvenv.cfg"),
            format!("home = {}\nversion = 3.11.7\n", base.join("bin").display()),
        )
        .expect("write");
        std::os::unix::fs::symlink(base.join("bin/python3.11"), venv.join("bin/python"))
            .expect("link");
        let env = PythonEnv::venv(&venv);
        let shown = python(&env).expect("shown");
        assert_eq!(shown, vec![venv.clone(), base.clone()]);

        // An interpreter whose installation is `/root` itself would show the home folder.
        let env = PythonEnv {
            python: PathBuf::from("/root/bin/python3"),
            prefix: PathBuf::from("/root"),
        };
        let error = python(&env).expect_err("holds a home");
        assert!(error.to_string().contains("home folder"), "{error}");
    }

    #[test]
    fn an_interpreter_under_usr_adds_nothing_the_system_part_lacks() {
        let env = PythonEnv {
            python: PathBuf::from("/usr/bin/python3-not-there"),
            prefix: PathBuf::from("/usr"),
        };
        assert_eq!(python(&env).expect("shown"), Vec::<PathBuf>::new());
    }
}
