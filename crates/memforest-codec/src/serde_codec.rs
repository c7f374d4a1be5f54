//! The one pinned bincode 2 configuration for MemForest metadata (SST properties blocks,
//! manifest edits, ...).
//!
//! The configuration is fixed here and nowhere else: little-endian, fixed-width integers, and
//! a 16 MiB decode limit, so a corrupt length can never make the decoder allocate more than
//! that. Every caller stores its own explicit format version number next to the encoded
//! bytes; changing this configuration is a format change for every one of them.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::DecodeError;

/// Largest value the decoder will materialise, in bytes.
pub const DECODE_LIMIT: usize = 16 << 20;

fn config() -> impl bincode::config::Config {
    bincode::config::standard()
        .with_little_endian()
        .with_fixed_int_encoding()
        .with_limit::<DECODE_LIMIT>()
}

/// Encodes `value` with the pinned configuration.
///
/// # Errors
/// Only if `value`'s `Serialize` implementation fails (never for plain data types).
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, bincode::error::EncodeError> {
    bincode::serde::encode_to_vec(value, config())
}

/// Decodes a `T` that must fill `bytes` exactly.
///
/// # Errors
/// A [`DecodeError`] at offset 0 when the bytes are not a valid `T` (wrong shape, over the
/// decode limit, or trailing bytes).
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeError> {
    let (value, used) = bincode::serde::decode_from_slice(bytes, config())
        .map_err(|_| DecodeError::new(0, "bincode value"))?;
    if used != bytes.len() {
        return Err(DecodeError::new(used, "trailing bytes after bincode value"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Sample {
        a: u64,
        b: Vec<u8>,
        c: String,
    }

    #[test]
    fn round_trip_and_fixed_width() {
        let s = Sample {
            a: 1,
            b: vec![1, 2],
            c: "x".into(),
        };
        let bytes = encode(&s).unwrap();
        // u64 fixed (8) + len u64 (8) + 2 + len u64 (8) + 1.
        assert_eq!(bytes.len(), 27);
        assert_eq!(decode::<Sample>(&bytes).unwrap(), s);
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode::<Sample>(&longer).is_err());
    }

    proptest! {
        #[test]
        fn garbage_never_panics(data: Vec<u8>) {
            let _ = decode::<Sample>(&data);
        }
    }
}
