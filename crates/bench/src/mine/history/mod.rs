//! Line cases mined from a repository's history in Long Code Arena's shape (`bench
//! mine-history`): a source file a commit adds is completed line by line, with the repository as
//! it was before that commit — the parent's tree, written out once per commit under the
//! repositories folder — as the context, so the file and everything committed with it are absent
//! (no leakage).
//!
//! A context folder holds the parent tree's source files of the languages crossfile indexes and
//! its ignore files (nothing else of a tree is read by retrieval).
//!
//! The commits are those reachable from HEAD with one parent (merges skipped), newest first
//! ([`git`]). A file qualifies when its language is one crossfile reads, it has
//! [`HistoryParams::min_lines`] to [`HistoryParams::max_lines`] lines (Long Code Arena's 200 to
//! 2,000), it is UTF-8 and within `workspace.max_file_bytes`, it is not vendored, generated,
//! minified, hidden or a declaration file ([`skip`]), and it is not a move or copy of a file the
//! parent already has ([`copies`]). Of the qualifying files, `files` are drawn (seeded); of each,
//! `lines_per_file` target lines, taken in turn from each category present ([`category`]:
//! committed, inproject, infile, common, non_informative, random), seeded by the seed, the commit
//! and the path, so a file gives the same lines whichever other files are drawn. Each record
//! also carries what its writer had lately edited: chunks of the commit's other files as
//! committed ([`recent`]), which only the `recent-commit` spec reads.
//!
//! Every choice is seeded and every order fixed, so the same repository, options and seed give
//! the same bytes.

mod category;
mod common;
mod copies;
mod git;
mod recent;
mod skip;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::bench::cases::history::{Category, HistoryMetadata, HistoryRecord, RecentChunk};
use crossfile_engine::lang::{self, Language};
use crossfile_engine::seeded::SplitMix64;
use crossfile_engine::workspace::normalize_newlines;

pub use category::MIN_INFORMATIVE_CHARS;

/// What to mine.
#[derive(Clone, Debug)]
pub struct HistoryParams {
    /// Completion files drawn.
    pub files: usize,
    /// Target lines drawn per file.
    pub lines_per_file: usize,
    pub seed: u64,
    /// Commits older than this (seconds since the Unix epoch) are not read.
    pub since: Option<i64>,
    /// At most this many commits are read (merges not counted).
    pub max_commits: Option<usize>,
    pub min_lines: usize,
    pub max_lines: usize,
    /// The language families (`python`, `java`, `typescript`, `csharp`) to mine; all if empty.
    pub languages: Vec<String>,
    /// Larger files are skipped, as the index skips them.
    pub max_file_bytes: u64,
    /// An added file sharing at least this share of its lines with one of its likely sources in
    /// the parent ([`copies`]) is a move or copy and left out; `None` keeps them.
    pub copy_similarity: Option<f64>,
}

/// The cases mined and what the walk found.
#[derive(Clone, Debug, Default)]
pub struct MinedHistory {
    pub records: Vec<HistoryRecord>,
    /// Commits read (one parent each).
    pub commits: usize,
    /// Added files that qualified.
    pub candidates: usize,
    /// Added source files left out, by reason.
    pub skipped: BTreeMap<&'static str, usize>,
    /// Context folders written now (those already there are kept).
    pub trees_written: usize,
    /// Files of the written context folders the repository lacks (a partial clone), left out.
    pub missing_objects: usize,
    /// Every context folder the cases use.
    pub folders: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("{path}: not a git repository crossfile can read: {message}")]
    Open { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Git { path: PathBuf, message: String },
    #[error("writing {path}: {error}")]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// A qualifying added file and its text (normalized as the index reads it).
struct Candidate {
    /// Index of its commit in the walk.
    commit: usize,
    file: git::File,
    language: Language,
    text: String,
}

/// Mines `repo` (a git repository), writing each context tree under `repos_dir`.
pub fn mine_history(
    repo_path: &Path,
    repos_dir: &Path,
    params: &HistoryParams,
    progress: &dyn Fn(&str),
) -> Result<MinedHistory, HistoryError> {
    let repo = git::Repo::open(repo_path)?;
    let name = repo_name(repo_path);
    progress("reading the history");
    let commits = repo.commits(params.since, params.max_commits)?;
    let mut mined = MinedHistory {
        commits: commits.len(),
        ..MinedHistory::default()
    };
    let mut candidates = Vec::new();
    for (at, commit) in commits.iter().enumerate() {
        let mut sources = copies::Sources::new(&repo, commit);
        for file in &commit.added {
            let Some(language) = Language::from_path(Path::new(&file.path)) else {
                continue;
            };
            if !params.languages.is_empty()
                && !params.languages.iter().any(|l| l == language.name())
            {
                continue;
            }
            let text = match qualifies(&repo, file, params)? {
                Ok(text) => text,
                Err(reason) => {
                    *mined.skipped.entry(reason).or_default() += 1;
                    continue;
                }
            };
            if let Some(min) = params.copy_similarity
                && sources.is_copy(file, &text, min)?
            {
                *mined.skipped.entry(COPY).or_default() += 1;
                continue;
            }
            candidates.push(Candidate {
                commit: at,
                file: file.clone(),
                language,
                text,
            });
        }
    }
    mined.candidates = candidates.len();
    let mut rng = SplitMix64(params.seed);
    for i in (1..candidates.len()).rev() {
        let j = rng.below(i + 1);
        candidates.swap(i, j);
    }
    candidates.truncate(params.files);
    candidates.sort_by(|a, b| (a.commit, &a.file.path).cmp(&(b.commit, &b.file.path)));

    let mut outlines = Outlines::default();
    let mut by_commit: BTreeMap<usize, Vec<&Candidate>> = BTreeMap::new();
    for candidate in &candidates {
        by_commit
            .entry(candidate.commit)
            .or_default()
            .push(candidate);
    }
    for (n, (&at, files)) in by_commit.iter().enumerate() {
        let commit = &commits[at];
        let parent = commit.parent.to_string();
        let folder = format!("{name}-{}", &parent[..12.min(parent.len())]);
        progress(&format!(
            "commit {} of {}: {} ({} file(s))",
            n + 1,
            by_commit.len(),
            &commit.id.to_string()[..12],
            files.len()
        ));
        let tree = repo.files(commit.parent_tree)?;
        let indexed: Vec<git::File> = tree
            .iter()
            .filter(|f| is_indexed(&f.path))
            .cloned()
            .collect();
        if let Some(missing) = repo.write_tree(&indexed, &repos_dir.join(&folder))? {
            mined.trees_written += 1;
            mined.missing_objects += missing;
        }
        mined.folders.push(folder.clone());
        let project = outlines.names_of(&repo, tree.iter())?;
        let others: Vec<&git::File> = commit.added.iter().chain(&commit.changed).collect();
        let languages: Vec<Language> = files.iter().map(|c| c.language).collect();
        let edits = recent::CommitEdits::read(&repo, commit, &languages, params.max_file_bytes)?;
        for candidate in files {
            let family = candidate.language.name();
            let empty = HashSet::new();
            let project_names = project.get(family).unwrap_or(&empty);
            let siblings = outlines.names_of(
                &repo,
                others
                    .iter()
                    .copied()
                    .filter(|f| f.path != candidate.file.path),
            )?;
            let committed: HashSet<String> = siblings
                .get(family)
                .map(|names| names.difference(project_names).cloned().collect())
                .unwrap_or_default();
            let recent = edits.ring_without(&candidate.file.path, candidate.language);
            let context = Context {
                folder: &folder,
                commit: commit.id,
                parent: commit.parent,
                project: project_names,
                committed: &committed,
                recent: &recent,
            };
            let seed = file_seed(params.seed, &commit.id, &candidate.file.path);
            mined
                .records
                .extend(cases_of(candidate, &context, params.lines_per_file, seed));
        }
    }
    Ok(mined)
}

/// Why a move or copy is left out, as `skipped` counts it.
const COPY: &str = "a move or copy of a file of the parent";

/// The seed of one file's line draw: the run's seed, the commit and the path, so a file's lines
/// stay the same when other files are drawn (`--files`, `--since` changed).
fn file_seed(seed: u64, commit: &ObjectId, path: &str) -> u64 {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&seed.to_le_bytes());
    hasher.update(commit.as_bytes());
    hasher.update(path.as_bytes());
    let hash = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// Whether a file of a context tree is written out: a source file of a language crossfile
/// indexes, an ignore file that decides which of them the index reads, or a file TypeScript
/// imports resolve through (`package.json`, `tsconfig.json`, `jsconfig.json`). Nothing else of
/// the tree is read by retrieval, and a repository's other files (images, data, vendored
/// archives) are most of its size.
fn is_indexed(path: &str) -> bool {
    let name = crossfile_engine::workspace::relative_file_name(path);
    Language::from_path(Path::new(path)).is_some()
        || matches!(
            name,
            ".gitignore" | ".ignore" | "package.json" | "tsconfig.json" | "jsconfig.json"
        )
}

/// The repository's folder name (without `.git`), the prefix of its context folders.
fn repo_name(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".to_string());
    let name = name.strip_suffix(".git").unwrap_or(&name).to_string();
    if name.is_empty() {
        "repo".to_string()
    } else {
        name
    }
}

/// The added file's text when it qualifies, else why not.
fn qualifies(
    repo: &git::Repo,
    file: &git::File,
    params: &HistoryParams,
) -> Result<Result<String, &'static str>, HistoryError> {
    let text = match source_text(repo, file, params.max_file_bytes) {
        Ok(text) => text,
        Err(reason) => return Ok(Err(reason)),
    };
    let lines = text.lines().count();
    if lines < params.min_lines {
        return Ok(Err("fewer lines than --min-lines"));
    }
    if lines > params.max_lines {
        return Ok(Err("more lines than --max-lines"));
    }
    if let Some(reason) = skip::reason(&file.path, &text) {
        return Ok(Err(reason));
    }
    Ok(Ok(text))
}

/// A blob's text as the index reads it (newlines normalized), or why it is not read: missing
/// from the repository (a partial clone), larger than `max_file_bytes`, or not UTF-8.
fn source_text(
    repo: &git::Repo,
    file: &git::File,
    max_file_bytes: u64,
) -> Result<String, &'static str> {
    let bytes = repo
        .blob_if_present(file.blob)
        .ok_or("missing from the repository")?;
    if bytes.len() as u64 > max_file_bytes {
        return Err("over workspace.max_file_bytes");
    }
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8")?;
    Ok(normalize_newlines(&text).into_owned())
}

/// Where a file's cases come from.
struct Context<'a> {
    folder: &'a str,
    commit: ObjectId,
    parent: ObjectId,
    project: &'a HashSet<String>,
    committed: &'a HashSet<String>,
    /// The commit's other files as lately edited ([`recent`]).
    recent: &'a [RecentChunk],
}

/// `k` target lines of `candidate`, taken in turn from each category present, as records.
fn cases_of(
    candidate: &Candidate,
    context: &Context<'_>,
    k: usize,
    seed: u64,
) -> Vec<HistoryRecord> {
    let text = &candidate.text;
    let language = candidate.language;
    let Some(tree) = lang::parse(language, text) else {
        return Vec::new();
    };
    let outline = lang::outline(language, text, &tree);
    let defined = category::Defined {
        project: context.project,
        committed: context.committed,
    };
    let targets = category::targets(language, text, &tree, &outline, &defined);
    let mut groups: BTreeMap<Category, Vec<category::Target>> = BTreeMap::new();
    for target in targets {
        groups.entry(target.category).or_default().push(target);
    }
    let mut rng = SplitMix64(seed);
    for group in groups.values_mut() {
        for i in (1..group.len()).rev() {
            let j = rng.below(i + 1);
            group.swap(i, j);
        }
    }
    let mut taken = Vec::new();
    while taken.len() < k && groups.values().any(|g| !g.is_empty()) {
        for group in groups.values_mut() {
            if taken.len() < k
                && let Some(target) = group.pop()
            {
                taken.push(target);
            }
        }
    }
    taken.sort_by_key(|t| t.line);
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let commit = context.commit.to_string();
    taken
        .into_iter()
        .filter_map(|t| {
            let start = *starts.get(t.line as usize)?;
            let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
            let line = &text[start..end];
            let indent = line.len() - line.trim_start().len();
            Some(HistoryRecord {
                prompt: text[..start + indent].to_string(),
                groundtruth: text[start + indent..end].to_string(),
                right_context: text[end..].to_string(),
                metadata: HistoryMetadata {
                    task_id: format!("{}/{}:{}", &commit[..12], candidate.file.path, t.line + 1),
                    repository: context.folder.to_string(),
                    commit: commit.clone(),
                    parent: context.parent.to_string(),
                    path: candidate.file.path.clone(),
                    line: t.line,
                    category: t.category,
                    identifiers: t.identifiers,
                    recent: context.recent.to_vec(),
                },
            })
        })
        .collect()
}

/// Definition names of blobs, parsed once each (commits share most of their files).
#[derive(Default)]
struct Outlines {
    by_blob: HashMap<ObjectId, (&'static str, Vec<String>)>,
}

impl Outlines {
    /// The names `files` define, by language family.
    fn names_of<'f>(
        &mut self,
        repo: &git::Repo,
        files: impl Iterator<Item = &'f git::File>,
    ) -> Result<HashMap<&'static str, HashSet<String>>, HistoryError> {
        let mut out: HashMap<&'static str, HashSet<String>> = HashMap::new();
        for file in files {
            let Some(language) = Language::from_path(Path::new(&file.path)) else {
                continue;
            };
            if let std::collections::hash_map::Entry::Vacant(slot) = self.by_blob.entry(file.blob) {
                let text = repo.blob_if_present(file.blob).map(String::from_utf8);
                let names = match text {
                    Some(Ok(text)) => lang::parse(language, &text)
                        .map(|tree| {
                            lang::outline(language, &text, &tree)
                                .symbols
                                .into_iter()
                                .map(|s| s.name)
                                .collect()
                        })
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                slot.insert((language.name(), names));
            }
            if let Some((family, names)) = self.by_blob.get(&file.blob) {
                out.entry(family).or_default().extend(names.iter().cloned());
            }
        }
        Ok(out)
    }
}
