//! The part of CBOR (RFC 8949) that WebAuthn speaks: an authenticator's attestation object and the
//! COSE key inside its data are CTAP2's canonical CBOR, so definite lengths only, integers, byte
//! and text strings, arrays, maps and the simple values. Anything else (indefinite lengths, tags,
//! floats) is refused rather than guessed at, and nesting and lengths are bounded by the input.

/// A decoded CBOR item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Major types 0 and 1: every integer CTAP2 writes fits an `i128`.
    Integer(i128),
    Bytes(Vec<u8>),
    Text(String),
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
    Bool(bool),
    Null,
}

impl Value {
    /// The value of `key` in a map.
    pub fn get(&self, key: &Value) -> Option<&Value> {
        match self {
            Self::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of the text key `key` in a map.
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.get(&Value::Text(key.to_owned()))
    }

    /// The value of the integer key `key` in a map (COSE labels).
    pub fn label(&self, key: i128) -> Option<&Value> {
        self.get(&Value::Integer(key))
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Bytes(bytes) => Some(bytes),
            _ => None,
        }
    }

    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(text) => Some(text),
            _ => None,
        }
    }

    pub fn as_integer(&self) -> Option<i128> {
        match self {
            Self::Integer(number) => Some(*number),
            _ => None,
        }
    }
}

/// Why an input is not the CBOR this reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    #[error("the CBOR ends early")]
    Truncated,
    #[error("the CBOR uses what WebAuthn's does not (indefinite lengths, tags, floats)")]
    Unsupported,
    #[error("the CBOR nests too deeply")]
    TooDeep,
    #[error("a CBOR text string is not UTF-8")]
    NotUtf8,
}

/// Deeper than any attestation object or COSE key.
const MAX_DEPTH: usize = 16;

/// Decodes the item at the start of `input`: the item and the bytes after it. The authenticator
/// data ends with a COSE key followed by extensions, so what follows an item is the caller's.
pub fn decode_prefix(input: &[u8]) -> Result<(Value, &[u8]), Malformed> {
    let mut reader = Reader { input, at: 0 };
    let value = reader.item(0)?;
    Ok((value, &input[reader.at..]))
}

/// Decodes `input`, which must hold one item and nothing after it.
pub fn decode(input: &[u8]) -> Result<Value, Malformed> {
    match decode_prefix(input)? {
        (value, []) => Ok(value),
        _ => Err(Malformed::Unsupported),
    }
}

struct Reader<'a> {
    input: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8], Malformed> {
        let end = self.at.checked_add(count).filter(|end| *end <= self.input.len()).ok_or(Malformed::Truncated)?;
        let taken = &self.input[self.at..end];
        self.at = end;
        Ok(taken)
    }

    /// The argument of an item's head: its value, or the length of what follows.
    fn argument(&mut self, info: u8) -> Result<u64, Malformed> {
        let width = match info {
            0..=23 => return Ok(u64::from(info)),
            24 => 1,
            25 => 2,
            26 => 4,
            27 => 8,
            _ => return Err(Malformed::Unsupported),
        };
        Ok(self.take(width)?.iter().fold(0u64, |value, byte| (value << 8) | u64::from(*byte)))
    }

    /// A length, which cannot be more than the bytes left (every element takes at least one).
    fn length(&mut self, info: u8) -> Result<usize, Malformed> {
        let length = self.argument(info)?;
        usize::try_from(length).ok().filter(|length| *length <= self.input.len() - self.at).ok_or(Malformed::Truncated)
    }

    fn item(&mut self, depth: usize) -> Result<Value, Malformed> {
        if depth > MAX_DEPTH {
            return Err(Malformed::TooDeep);
        }
        let head = self.take(1)?[0];
        let (major, info) = (head >> 5, head & 0x1f);
        match major {
            0 => Ok(Value::Integer(i128::from(self.argument(info)?))),
            1 => Ok(Value::Integer(-1 - i128::from(self.argument(info)?))),
            2 => {
                let length = self.length(info)?;
                Ok(Value::Bytes(self.take(length)?.to_vec()))
            }
            3 => {
                let length = self.length(info)?;
                let text = std::str::from_utf8(self.take(length)?).map_err(|_| Malformed::NotUtf8)?;
                Ok(Value::Text(text.to_owned()))
            }
            4 => {
                let length = self.length(info)?;
                let mut items = Vec::with_capacity(length);
                for _ in 0..length {
                    items.push(self.item(depth + 1)?);
                }
                Ok(Value::Array(items))
            }
            5 => {
                let length = self.length(info)?;
                let mut entries = Vec::with_capacity(length);
                for _ in 0..length {
                    let key = self.item(depth + 1)?;
                    let value = self.item(depth + 1)?;
                    entries.push((key, value));
                }
                Ok(Value::Map(entries))
            }
            7 => match info {
                20 => Ok(Value::Bool(false)),
                21 => Ok(Value::Bool(true)),
                22 => Ok(Value::Null),
                _ => Err(Malformed::Unsupported),
            },
            _ => Err(Malformed::Unsupported),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_items_of_rfc_8949_appendix_a() {
        assert_eq!(decode(&[0x00]), Ok(Value::Integer(0)));
        assert_eq!(decode(&[0x18, 0x64]), Ok(Value::Integer(100)));
        assert_eq!(
            decode(&[0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            Ok(Value::Integer(u64::MAX.into()))
        );
        assert_eq!(decode(&[0x26]), Ok(Value::Integer(-7)));
        assert_eq!(decode(&[0x39, 0x01, 0x00]), Ok(Value::Integer(-257)));
        assert_eq!(decode(&[0x43, 1, 2, 3]), Ok(Value::Bytes(vec![1, 2, 3])));
        assert_eq!(decode(&[0x62, b'a', b'b']), Ok(Value::Text("ab".into())));
        assert_eq!(decode(&[0xf5]), Ok(Value::Bool(true)));
        let map = decode(&[0xa2, 0x01, 0x02, 0x63, b'f', b'm', b't', 0x80]).unwrap();
        assert_eq!(map.label(1), Some(&Value::Integer(2)));
        assert_eq!(map.field("fmt"), Some(&Value::Array(vec![])));
    }

    #[test]
    fn what_follows_an_item_is_left_to_the_caller_and_refused_by_decode() {
        assert_eq!(decode_prefix(&[0x01, 0xaa]), Ok((Value::Integer(1), &[0xaa][..])));
        assert_eq!(decode(&[0x01, 0xaa]), Err(Malformed::Unsupported));
    }

    #[test]
    fn refuses_what_it_does_not_read_and_lengths_beyond_the_input() {
        // Indefinite-length byte string, a tag, a float.
        assert_eq!(decode(&[0x5f, 0x41, 0x00, 0xff]), Err(Malformed::Unsupported));
        assert_eq!(decode(&[0xc0, 0x00]), Err(Malformed::Unsupported));
        assert_eq!(decode(&[0xf9, 0x3c, 0x00]), Err(Malformed::Unsupported));
        // A byte string or an array claiming four billion elements in a few bytes.
        assert_eq!(decode(&[0x5a, 0xff, 0xff, 0xff, 0xff, 0x00]), Err(Malformed::Truncated));
        assert_eq!(decode(&[0x9a, 0xff, 0xff, 0xff, 0xff, 0x00]), Err(Malformed::Truncated));
        assert_eq!(decode(&[0x62, 0xff, 0xfe]), Err(Malformed::NotUtf8));
        assert_eq!(decode(&[0x81; 40]), Err(Malformed::TooDeep));
        assert_eq!(decode(&[]), Err(Malformed::Truncated));
    }
}
