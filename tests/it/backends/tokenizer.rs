//! The tokenizer built from a GGUF's metadata gives llama.cpp's own ids, on real code of the
//! four languages and on awkward text, for the default model's pre-tokenizer (`qwen2`), the
//! small model's (`smollm`) and, through vocabulary-only copies of its GGUF with another
//! `tokenizer.ggml.pre`, for the others.

use std::path::Path;

use crossfile_engine::backend::EmbeddedBackend;
use crossfile_engine::tokenize::{
    GgufTokenizer, GgufValue, SUPPORTED_PRE, TokenizeError, Tokenizer, read_metadata,
};

use crate::support::{corpus_workspace, read_text, source_files};

pub use crate::support::{default_model, small_model};

/// Text that has tripped tokenizers up.
const AWKWARD: &[&str] = &[
    "",
    " ",
    "\n",
    "def f(x):\n\treturn x  # tab\n",
    "line one\r\nline two\r\n\r\n",
    "a\r\rb",
    "x = 1234567890 + 3.14159e-10",
    "x        =          y\n\n\n\n\n        \n    z",
    "                                                                end",
    "\t\t\t\t\tindented\t\twith\ttabs",
    "naïve café, Ünïcödé — «quotes» …",
    "日本語のテキスト、中文文本，한국어 텍스트",
    "emoji 🦀🐍☕️👩‍💻🏳️‍🌈 and flags 🇫🇷",
    "Ελληνικά и русский текст",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>",
    "text<|endoftext|>more",
    "<|im_start|><|im_start|>",
    "I'm sure it's what we'd've DON'T they'LL",
    "    ",
    "a  b   c    d",
    "¡¿‽⁂ \u{200b}zero\u{200b}width\u{feff}bom",
    "0x1F 1_000_000 ٣٤٥ ⅫⅣ ²³",
    "$$ ++ <<= >>= ^^ ~~ || `` @@ ## %%",
];

/// Real code: `per_language` files from a workspace of each language, whole.
fn code_samples(per_language: usize) -> Vec<String> {
    let workspaces: [(&str, &[&str]); 4] = [
        ("click", &["py"]),
        ("cordova-android", &["java"]),
        ("mobx", &["ts", "tsx"]),
        ("pythonnet", &["cs"]),
    ];
    let mut samples = Vec::new();
    for (name, exts) in workspaces {
        let files = source_files(&corpus_workspace(name), exts);
        assert!(files.len() >= per_language, "{name}: too few files");
        // Spread over the workspace, not just its first directory.
        let step = files.len() / per_language;
        for file in files.iter().step_by(step.max(1)).take(per_language) {
            samples.push(read_text(file));
        }
    }
    samples
}

/// Compares the two tokenizers on every sample; returns how many were compared. Our `count`
/// (which does not encode) must equal the number of llama.cpp's ids, on each sample and on
/// pieces of it cut anywhere, as the prompt budget cuts them.
fn compare(
    reference: &dyn Tokenizer,
    ours: &dyn Tokenizer,
    samples: &[String],
    what: &str,
) -> usize {
    let mut differences = Vec::new();
    for sample in samples {
        let expected = reference.encode(sample);
        let got = ours.encode(sample);
        for piece in std::iter::once(sample.as_str()).chain(cuts(sample)) {
            let (counted, wanted) = (ours.count(piece), reference.encode(piece).len());
            if counted != wanted {
                differences.push(format!(
                    "{what}: count of {:?}…: {counted}, llama.cpp's ids: {wanted}",
                    piece.chars().take(40).collect::<String>()
                ));
            }
        }
        if expected != got {
            let at = expected
                .iter()
                .zip(&got)
                .take_while(|(a, b)| a == b)
                .count();
            differences.push(format!(
                "{what}: {:?}…: first difference at token {at}: llama.cpp {:?} ({:?}) vs ours {:?} ({:?})",
                sample.chars().take(40).collect::<String>(),
                expected.get(at..at + 3),
                reference.decode(expected.get(at..at + 3).unwrap_or_default()),
                got.get(at..at + 3),
                ours.decode(got.get(at..at + 3).unwrap_or_default()),
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} differ:\n{}",
        differences.len(),
        samples.len(),
        differences.join("\n")
    );
    samples.len()
}

/// Suffixes and prefixes of `text` cut at seven places spread over it (at character
/// boundaries, mostly inside a line), and the text between the first and last cut.
fn cuts(text: &str) -> Vec<&str> {
    let bounds: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
    if bounds.len() < 8 {
        return Vec::new();
    }
    let at: Vec<usize> = (1..8).map(|k| bounds[k * bounds.len() / 8]).collect();
    let mut pieces: Vec<&str> = at.iter().flat_map(|&a| [&text[a..], &text[..a]]).collect();
    pieces.push(&text[at[0]..at[6]]);
    pieces
}

/// Snippets of real code as prompts hold them: `per_language` runs of 20 lines from files spread
/// over a workspace of each language (every sample's runs in turn, until there are enough).
fn code_snippets(per_language: usize) -> Vec<String> {
    let files = code_samples(per_language / 4);
    let mut snippets = Vec::new();
    for language in files.chunks(per_language / 4) {
        let runs: Vec<Vec<String>> = language
            .iter()
            .map(|file| {
                let lines: Vec<&str> = file.split_inclusive('\n').collect();
                lines.chunks(20).map(|run| run.concat()).collect()
            })
            .collect();
        let mut taken = 0;
        for round in 0.. {
            let before = taken;
            for file in &runs {
                if let Some(run) = file.get(round).filter(|_| taken < per_language) {
                    snippets.push(run.clone());
                    taken += 1;
                }
            }
            if taken == before {
                break;
            }
        }
    }
    snippets
}

#[test]
fn the_default_models_tokenizer_equals_llama_cpps() {
    let model = default_model();
    let reference = EmbeddedBackend::load_tokenizer(&model).expect("llama.cpp vocabulary");
    let ours = GgufTokenizer::from_gguf(&model).expect("tokenizer from GGUF");
    let meta = read_metadata(&model).expect("metadata");
    assert_eq!(
        meta.get("tokenizer.ggml.pre"),
        Some(&GgufValue::String("qwen2".into()))
    );
    let mut samples = code_snippets(125);
    assert!(samples.len() >= 500, "{} snippets", samples.len());
    samples.extend(AWKWARD.iter().map(|s| s.to_string()));
    samples.extend(code_samples(2).iter().map(|s| s.replace('\n', "\r\n")));
    samples.extend(code_samples(2).iter().map(|s| s.replace("    ", "\t")));
    let compared = compare(&*reference, &ours, &samples, "qwen2");
    eprintln!("qwen2 tokenizer parity: {compared} strings, 0 differences");

    // The repository-level and fill-in-the-middle tokens are one token each, as llama.cpp has them.
    for special in [
        "<|fim_prefix|>",
        "<|fim_suffix|>",
        "<|fim_middle|>",
        "<|fim_pad|>",
        "<|repo_name|>",
        "<|file_sep|>",
        "<|endoftext|>",
    ] {
        let id = ours.token_id(special).expect(special);
        assert_eq!(reference.token_id(special), Some(id), "{special}");
        assert_eq!(ours.encode(special), [id], "{special}");
    }
    let text = "<|repo_name|>click\n<|file_sep|>src/a.py\nx = 1\n<|fim_prefix|>def f(<|fim_suffix|>)<|fim_middle|>";
    assert_eq!(ours.encode(text), reference.encode(text));
}

#[test]
fn the_small_models_tokenizer_equals_llama_cpps() {
    let model = small_model();
    let reference = EmbeddedBackend::load_tokenizer(&model).expect("llama.cpp vocabulary");
    let ours = GgufTokenizer::from_gguf(&model).expect("tokenizer from GGUF");
    let mut samples = code_samples(12);
    samples.extend(AWKWARD.iter().map(|s| s.to_string()));
    // Real code with Windows line ends and tabs for indentation.
    samples.extend(code_samples(2).iter().map(|s| s.replace('\n', "\r\n")));
    samples.extend(code_samples(2).iter().map(|s| s.replace("    ", "\t")));
    let compared = compare(&*reference, &ours, &samples, "smollm");
    eprintln!("tokenizer parity: {compared} strings, 0 differences");

    // Special tokens are one token; decode renders them; token_id finds them.
    let im_start = ours.token_id("<|im_start|>").expect("<|im_start|>");
    assert_eq!(reference.token_id("<|im_start|>"), Some(im_start));
    assert_eq!(ours.encode("<|im_start|>"), [im_start]);
    let ids = ours.encode("<|im_start|>user\nhé 🦀");
    assert_eq!(ours.decode(&ids), "<|im_start|>user\nhé 🦀");
    assert_eq!(reference.decode(&ids), "<|im_start|>user\nhé 🦀");
    assert_eq!(ours.token_id("no such token at all"), None);
}

#[test]
fn every_supported_pre_tokenizer_equals_llama_cpps() {
    let model = small_model();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut samples = code_samples(3);
    samples.extend(AWKWARD.iter().map(|s| s.to_string()));
    let mut total = 0;
    for &pre in SUPPORTED_PRE {
        let path = dir.path().join(format!("{pre}.gguf"));
        write_vocab_only(&model, &path, pre);
        let reference = EmbeddedBackend::load_tokenizer(&path).expect("llama.cpp vocabulary");
        let ours = GgufTokenizer::from_gguf(&path).expect("tokenizer from GGUF");
        total += compare(&*reference, &ours, &samples, pre);
    }
    eprintln!("pre-tokenizer parity: {total} strings, 0 differences");
}

#[test]
fn unknown_tokenizers_say_what_to_configure() {
    let model = small_model();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("odd.gguf");
    write_vocab_only(&model, &path, "no-such-pre");
    let err = GgufTokenizer::from_gguf(&path).err().expect("unsupported");
    assert!(matches!(err, TokenizeError::Unsupported { .. }), "{err}");
    assert!(
        err.to_string().ends_with(
            "unsupported tokenizer `tokenizer.ggml.pre = no-such-pre`; configure \
             `model.tokenizer` with a tokenizer.json"
        ),
        "{err}"
    );
    // SentencePiece vocabularies (Code Llama's) are not built from GGUF metadata.
    let spm = dir.path().join("spm.gguf");
    write_metadata_only(&model, &spm, &[("tokenizer.ggml.model", "llama")]);
    let err = GgufTokenizer::from_gguf(&spm).err().expect("unsupported");
    assert!(
        err.to_string()
            .contains("unsupported tokenizer `tokenizer.ggml.model = llama`"),
        "{err}"
    );
    let meta = read_metadata(&model).expect("metadata");
    assert_eq!(
        meta.get("tokenizer.ggml.pre"),
        Some(&GgufValue::String("smollm".into()))
    );
    assert_eq!(
        meta.get("tokenizer.ggml.tokens")
            .and_then(|t| t.as_array())
            .map(<[_]>::len),
        Some(49152)
    );
    let err = GgufTokenizer::from_gguf(Path::new("/nonexistent.gguf"))
        .err()
        .expect("missing");
    assert!(
        err.to_string()
            .starts_with("/nonexistent.gguf: cannot read"),
        "{err}"
    );
}

/// Writes a copy of `source`'s metadata, with `tokenizer.ggml.pre` set to `pre` and no
/// tensors: enough for llama.cpp to load its vocabulary.
fn write_vocab_only(source: &Path, dest: &Path, pre: &str) {
    write_metadata_only(source, dest, &[("tokenizer.ggml.pre", pre)]);
}

/// Writes a copy of `source`'s metadata with the string keys in `set` replaced, and no
/// tensors.
fn write_metadata_only(source: &Path, dest: &Path, set: &[(&str, &str)]) {
    let bytes = std::fs::read(source).expect("read model");
    let mut at = 0usize;
    let mut take = |n: usize| {
        let s = &bytes[at..at + n];
        at += n;
        s
    };
    let header = take(8).to_vec(); // magic, version
    take(8); // tensor count
    let kv_count = u64::from_le_bytes(take(8).try_into().expect("8 bytes"));
    let mut out = header;
    out.extend(0u64.to_le_bytes());
    out.extend(kv_count.to_le_bytes());
    let mut cursor = Cursor {
        bytes: &bytes,
        at: 24,
    };
    for _ in 0..kv_count {
        let start = cursor.at;
        let key = cursor.string();
        let kind = cursor.u32();
        cursor.skip_value(kind);
        if let Some((_, value)) = set.iter().find(|(k, _)| *k == key) {
            out.extend((key.len() as u64).to_le_bytes());
            out.extend(key.as_bytes());
            out.extend(8u32.to_le_bytes());
            out.extend((value.len() as u64).to_le_bytes());
            out.extend(value.as_bytes());
        } else {
            out.extend(&bytes[start..cursor.at]);
        }
    }
    // The (empty) data section starts at an aligned offset.
    out.resize(out.len().next_multiple_of(32), 0);
    std::fs::write(dest, out).expect("write vocabulary-only GGUF");
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        s
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().expect("4 bytes"))
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().expect("8 bytes"))
    }
    fn string(&mut self) -> String {
        let n = self.u64() as usize;
        String::from_utf8_lossy(self.take(n)).into_owned()
    }
    fn skip_value(&mut self, kind: u32) {
        match kind {
            0 | 1 | 7 => self.at += 1,
            2 | 3 => self.at += 2,
            4..=6 => self.at += 4,
            10..=12 => self.at += 8,
            8 => {
                let n = self.u64() as usize;
                self.at += n;
            }
            9 => {
                let item = self.u32();
                for _ in 0..self.u64() {
                    self.skip_value(item);
                }
            }
            other => panic!("GGUF value type {other}"),
        }
    }
}
