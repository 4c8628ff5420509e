//! How Avro payloads are fed to `arrow-avro`'s streaming decoder (rust/values/avro/arrow.rs): one
//! at a time, each its schema's framing (`0` and an 8-byte key) then its own bytes, in two
//! calls and not copied; each must be exactly one record, using exactly its own bytes. The
//! decoder switches schema only between flushes, so a batch's payloads are fed grouped by
//! writer schema.

use std::collections::HashMap;

use arrow_array::ArrayRef;
use arrow_avro::reader::Decoder;

/// How a payload is fed to `arrow-avro`'s streaming decoder without being copied: its schema
/// key framed alone (`0` and 8 bytes), then its bytes, in two calls. After a record the
/// decoder reads on into what follows it, and bytes left after a payload's record that happen
/// to be exactly `0` and a known key would be taken as the next record's framing, unseen. A
/// key is a schema id XOR a random seed, and a batch in which some payload ends with a known
/// key's framing is decoded with a new seed: so bytes left after a record always show, as an
/// error or as bytes not consumed.
pub(super) struct Keys;

impl Keys {
    /// A seed picked at random (`salt` tells the tries of one moment apart).
    pub(super) fn seed(salt: u64) -> u64 {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(salt);
        h.finish()
    }

    /// The framing of schema `id` under `seed`.
    pub(super) fn prefix(id: u64, seed: u64) -> [u8; 9] {
        let mut p = [0u8; 9];
        p[1..].copy_from_slice(&(id ^ seed).to_be_bytes());
        p
    }

    /// Whether `bytes` end with the framing of a schema in `known`.
    pub(super) fn ends_framed(bytes: &[u8], seed: u64, known: &HashMap<u64, String>) -> bool {
        let Some(tail) = bytes.len().checked_sub(9).map(|s| &bytes[s..]) else {
            return false;
        };
        let key = u64::from_be_bytes(tail[1..].try_into().unwrap_or_default());
        tail[0] == 0 && known.contains_key(&(key ^ seed))
    }
}

/// A payload to decode: its index in the batch, its schema id, its framing.
pub(super) type Span = (usize, u64, [u8; 9]);

/// `spans` grouped by schema id, each group in payload order, the groups in the order their
/// first payloads come in: `spans` as they are when one schema or runs of schemas wrote the
/// batch.
pub(super) fn by_schema(spans: Vec<Span>) -> Vec<Span> {
    // Each id's group (in order of appearance) and size; the group of the last span seen.
    let mut groups: HashMap<u64, usize> = HashMap::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut runs = 0;
    let mut last: Option<(u64, usize)> = None;
    for &(_, id, _) in &spans {
        let group = match last {
            Some((l, g)) if l == id => g,
            _ => {
                runs += 1;
                let next = groups.len();
                let g = *groups.entry(id).or_insert(next);
                if g == sizes.len() {
                    sizes.push(0);
                }
                last = Some((id, g));
                g
            }
        };
        sizes[group] += 1;
    }
    if runs == sizes.len() {
        return spans;
    }
    // Where each group's next span goes.
    let mut next: Vec<usize> = Vec::with_capacity(sizes.len());
    let mut start = 0;
    for n in sizes {
        next.push(start);
        start += n;
    }
    let mut out = vec![(0, 0, [0u8; 9]); spans.len()];
    let mut last: Option<(u64, usize)> = None;
    for span in spans {
        let group = match last {
            Some((l, g)) if l == span.1 => g,
            _ => {
                let g = groups.get(&span.1).copied().unwrap_or_default();
                last = Some((span.1, g));
                g
            }
        };
        out[next[group]] = span;
        next[group] += 1;
    }
    out
}

/// Feeds one payload, its framing (`prefix`) first: it must be exactly one record.
pub(super) fn decode_one(
    decoder: &mut Decoder,
    prefix: &[u8; 9],
    bytes: &[u8],
) -> std::result::Result<(), String> {
    let before = decoder.capacity();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        match decoder.decode(prefix) {
            Ok(9) => decoder.decode(bytes),
            Ok(n) => Err(arrow_avro::errors::AvroError::General(format!(
                "{n} bytes of a 9-byte framing read"
            ))),
            Err(e) => Err(e),
        }
    }));
    match outcome {
        Err(_) => Err("the Avro decoder failed on these bytes".to_string()),
        Ok(Err(e)) => Err(format!("not valid Avro for its schema: {e}")),
        Ok(Ok(n)) if n < bytes.len() && before == decoder.capacity() + 1 => Err(format!(
            "{} bytes left after the Avro value",
            bytes.len() - n
        )),
        Ok(Ok(n)) if n < bytes.len() || before != decoder.capacity() + 1 => {
            Err("the Avro value ends before its bytes do (truncated?)".to_string())
        }
        Ok(Ok(_)) => Ok(()),
    }
}

/// The decoded rows of `decoder` as an array (None: it holds none). A row can decode and its
/// column still not build (a string that is not UTF-8 is found only here): the error.
pub(super) fn try_flush(decoder: &mut Decoder) -> std::result::Result<Option<ArrayRef>, String> {
    if decoder.batch_is_empty() {
        return Ok(None);
    }
    let batch = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decoder.flush()))
        .map_err(|_| "the Avro decoder failed on these bytes".to_string())?
        .map_err(|e| format!("not valid Avro for its schema: {e}"))?;
    Ok(batch.map(|b| b.column(0).clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_grouped_by_schema_in_payload_order() {
        let span = |i: usize, id: u64| (i, id, [0u8; 9]);
        let order = |spans: Vec<Span>| -> Vec<(usize, u64)> {
            by_schema(spans).iter().map(|&(i, id, _)| (i, id)).collect()
        };
        let runs = vec![span(0, 7), span(1, 7), span(2, 3), span(4, 3)];
        assert_eq!(order(runs), vec![(0, 7), (1, 7), (2, 3), (4, 3)]);
        let mixed = vec![span(0, 2), span(1, 1), span(2, 2), span(3, 9), span(5, 1)];
        assert_eq!(order(mixed), vec![(0, 2), (2, 2), (1, 1), (5, 1), (3, 9)]);
        assert!(order(Vec::new()).is_empty());
    }
}
