//! Named choices: a setting or flag that takes one of a fixed set of names.
//!
//! Each is an enum declared with [`choice!`](macro@crate::choice), which derives, from its one
//! definition, its names (strum's `IntoStaticStr` and `Display`, kebab-case unless a variant
//! says otherwise), its parsing (`EnumString`, a name it does not know being an [`UnknownName`]
//! that lists the names), the list of its names in order (`VariantNames`: what an error,
//! `--help` and the docs give), every value (`VariantArray`) and serde's (de)serialization by the
//! same names ([`serde_by_name!`](macro@crate::serde_by_name)), with no second list of renames. A
//! bad value in `crossfile.toml` is then reported with its dotted key (the loader's
//! `serde_path_to_error`), the value and the accepted names, from the enum.
//!
//! The tests below declare one as the settings do.

use std::fmt;
use std::str::FromStr;

pub use strum::{VariantArray, VariantNames};

/// A name that is none of a choice's names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not one of {}", .accepted.join(", "))]
pub struct UnknownName {
    /// What was given.
    pub value: String,
    /// Every name the choice accepts, in its order.
    pub accepted: Vec<&'static str>,
}

impl UnknownName {
    /// `value`, which is none of `T`'s names.
    pub fn of<T: VariantNames>(value: &str) -> UnknownName {
        UnknownName {
            value: value.to_string(),
            accepted: T::VARIANTS.to_vec(),
        }
    }
}

/// An enum of named choices (see the module's documentation); implemented for every enum that
/// derives what it asks.
pub trait Choice:
    Copy + 'static + FromStr<Err = UnknownName> + VariantNames + VariantArray + Into<&'static str>
{
    /// Its name, as settings and flags write it.
    fn name(self) -> &'static str {
        self.into()
    }

    /// Every name, in order.
    fn names() -> &'static [&'static str] {
        <Self as VariantNames>::VARIANTS
    }

    /// Every value, in order.
    fn all() -> &'static [Self] {
        <Self as VariantArray>::VARIANTS
    }
}

/// Declares a named choice: the enum as written (its docs, variants and any more derives), with
/// the derives every choice has (names in kebab-case unless a variant's
/// `#[strum(serialize = "…")]` says otherwise) and [`serde_by_name!`](crate::serde_by_name). The
/// calling crate depends on `strum` and `serde`.
#[macro_export]
macro_rules! choice {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(
            Clone,
            Copy,
            Debug,
            PartialEq,
            Eq,
            Hash,
            ::strum::EnumString,
            ::strum::Display,
            ::strum::IntoStaticStr,
            ::strum::VariantNames,
            ::strum::VariantArray,
        )]
        #[strum(
            serialize_all = "kebab-case",
            parse_err_ty = $crate::choice::UnknownName,
            parse_err_fn = $crate::choice::UnknownName::of::<Self>
        )]
        $vis enum $name { $($body)* }

        $crate::serde_by_name!($name);
    };
}

/// serde's (de)serialization of named choices by their names: `serde_by_name!(Unit);` beside the
/// enum (a declarative macro rather than a crate: `serde_with`'s derives would bring a second
/// `syn` and a dozen optional crates for these few lines).
#[macro_export]
macro_rules! serde_by_name {
    ($($choice:ty),+ $(,)?) => {$(
        impl ::serde::Serialize for $choice {
            fn serialize<S: ::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(<&'static str>::from(*self))
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $choice {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                $crate::choice::deserialize_by_name(deserializer)
            }
        }
    )+};
}

/// Reads a choice by its name; a name it does not know is an error that lists its names.
pub fn deserialize_by_name<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: FromStr<Err = UnknownName>,
{
    let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
    text.parse().map_err(serde::de::Error::custom)
}

impl<T> Choice for T where
    T: Copy
        + 'static
        + FromStr<Err = UnknownName>
        + VariantNames
        + VariantArray
        + Into<&'static str>
{
}

/// A choice that may also be `auto`: decided from what is known at run time (the model's
/// vocabulary, for a prompt's template and layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OrAuto<T> {
    #[default]
    Auto,
    Is(T),
}

impl<T> OrAuto<T> {
    /// The choice made, `None` for `auto`.
    pub fn chosen(self) -> Option<T> {
        match self {
            OrAuto::Auto => None,
            OrAuto::Is(t) => Some(t),
        }
    }
}

impl<T: Choice> OrAuto<T> {
    /// `auto`, then every name of `T`.
    pub fn names() -> Vec<&'static str> {
        std::iter::once("auto")
            .chain(T::names().iter().copied())
            .collect()
    }
}

impl<T: Choice> FromStr for OrAuto<T> {
    type Err = UnknownName;

    fn from_str(value: &str) -> Result<Self, UnknownName> {
        if value == "auto" {
            return Ok(OrAuto::Auto);
        }
        value.parse().map(OrAuto::Is).map_err(|_| UnknownName {
            value: value.to_string(),
            accepted: OrAuto::<T>::names(),
        })
    }
}

impl<T: Choice> fmt::Display for OrAuto<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OrAuto::Auto => f.write_str("auto"),
            OrAuto::Is(t) => f.write_str(t.name()),
        }
    }
}

impl<'de, T: Choice> serde::Deserialize<'de> for OrAuto<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_by_name(deserializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::choice! {
        /// A choice as the settings declare one.
        enum Flavour {
            Plain,
            FillInTheMiddle,
            #[strum(serialize = "llamacpp")]
            LlamaCpp,
        }
    }

    #[test]
    fn names_parse_and_print_from_the_one_definition() {
        assert_eq!(
            Flavour::names(),
            ["plain", "fill-in-the-middle", "llamacpp"]
        );
        for &f in Flavour::all() {
            assert_eq!(f.name().parse::<Flavour>(), Ok(f));
            assert_eq!(f.to_string(), f.name());
        }
        let error = "llama-cpp".parse::<Flavour>().expect_err("not a name");
        assert_eq!(
            error.to_string(),
            "`llama-cpp` is not one of plain, fill-in-the-middle, llamacpp"
        );
    }

    #[test]
    fn serde_reads_and_writes_the_same_names_and_says_which_it_accepts() {
        let f: Flavour = serde_json::from_str("\"fill-in-the-middle\"").expect("a name");
        assert_eq!(f, Flavour::FillInTheMiddle);
        assert_eq!(
            serde_json::to_string(&f).expect("json"),
            "\"fill-in-the-middle\""
        );
        let error = serde_json::from_str::<Flavour>("\"raw\"").expect_err("not a name");
        assert!(
            error
                .to_string()
                .contains("`raw` is not one of plain, fill-in-the-middle, llamacpp"),
            "{error}"
        );
    }

    #[test]
    fn or_auto_takes_auto_or_a_name_and_lists_both() {
        assert_eq!("auto".parse::<OrAuto<Flavour>>(), Ok(OrAuto::Auto));
        assert_eq!(
            "plain".parse::<OrAuto<Flavour>>(),
            Ok(OrAuto::Is(Flavour::Plain))
        );
        let error = serde_json::from_str::<OrAuto<Flavour>>("\"\"").expect_err("empty");
        assert!(
            error
                .to_string()
                .contains("`` is not one of auto, plain, fill-in-the-middle, llamacpp"),
            "{error}"
        );
        assert_eq!(OrAuto::Is(Flavour::LlamaCpp).to_string(), "llamacpp");
        assert_eq!(OrAuto::<Flavour>::Auto.chosen(), None);
    }
}
