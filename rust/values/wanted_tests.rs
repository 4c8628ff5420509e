//! What the tests of pruned decoders share (Spark's nested pruning, [`Wanted`]): a random
//! part of a column's type to ask for, and an array cut down to it by name as the Spark
//! reader cuts it.

use std::sync::Arc;

use crate::values::decoder::{Decoded, Wanted};

/// A random part of `data_type` to ask for: each struct's fields kept at random (at least one
/// where it has any), lists' items and maps' values in turn.
pub(crate) fn random_wanted(
    data_type: &arrow_schema::DataType,
    below: &mut dyn FnMut(u64) -> u64,
) -> Wanted {
    use arrow_schema::DataType;
    match data_type {
        DataType::Struct(fields) => {
            let mut kept: Vec<(String, Wanted)> = Vec::new();
            for f in fields.iter() {
                if below(2) == 0 {
                    kept.push((f.name().clone(), random_wanted(f.data_type(), below)));
                }
            }
            if kept.is_empty() && !fields.is_empty() {
                let f = &fields[below(fields.len() as u64) as usize];
                kept.push((f.name().clone(), random_wanted(f.data_type(), below)));
            }
            Wanted::Fields(kept)
        }
        DataType::List(item) => random_wanted(item.data_type(), below),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) => random_wanted(kv[1].data_type(), below),
            _ => Wanted::All,
        },
        _ => Wanted::All,
    }
}

/// `array` with only what `wanted` asks for, by name (what the Spark reader's pruning keeps).
pub(crate) fn select(array: &arrow_array::ArrayRef, wanted: &Wanted) -> arrow_array::ArrayRef {
    use arrow_array::cast::AsArray;
    use arrow_array::{Array, ListArray, MapArray, StructArray};
    use arrow_schema::{DataType, Field, Fields};
    match (array.data_type(), wanted) {
        (DataType::Struct(fields), Wanted::Fields(asked)) => {
            let s = array.as_struct();
            let (names, children): (Vec<Field>, Vec<arrow_array::ArrayRef>) = asked
                .iter()
                .filter_map(|(name, w)| {
                    let i = fields.iter().position(|f| f.name() == name)?;
                    let child = select(s.column(i), w);
                    Some((Field::new(name, child.data_type().clone(), true), child))
                })
                .unzip();
            Arc::new(
                StructArray::try_new_with_length(
                    Fields::from(names),
                    children,
                    s.nulls().cloned(),
                    s.len(),
                )
                .unwrap(),
            )
        }
        (DataType::List(_), _) => {
            let list = array.as_list::<i32>();
            let values = select(list.values(), wanted);
            Arc::new(ListArray::new(
                Arc::new(Field::new_list_field(values.data_type().clone(), true)),
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
            ))
        }
        (DataType::Map(field, sorted), _) => {
            let map = array.as_map();
            let values = select(map.values(), wanted);
            let DataType::Struct(kv) = field.data_type() else {
                unreachable!()
            };
            let entries = Fields::from(vec![
                kv[0].as_ref().clone(),
                Field::new("value", values.data_type().clone(), true),
            ]);
            let entries_array =
                StructArray::new(entries.clone(), vec![map.keys().clone(), values], None);
            Arc::new(MapArray::new(
                Arc::new(Field::new(field.name(), DataType::Struct(entries), false)),
                map.offsets().clone(),
                entries_array,
                map.nulls().cloned(),
                *sorted,
            ))
        }
        _ => array.clone(),
    }
}

/// A die for [`random_wanted`] from a proptest seed (xorshift): `below(n)` is in `0..n`.
pub(crate) fn die(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed | 1;
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n.max(1)
    }
}

/// Whether a pruned decoder's `pruned` agrees with the whole decoder's `whole` on what
/// `wanted` asks for: a payload the pruned one refuses, the whole one refuses; where the whole
/// one reads a payload, the pruned one reads the same parts of it (a payload bad only in a
/// part left out reads). `shown(i)` tells payload `i` in a failure.
pub(crate) fn agrees(
    whole: &Decoded,
    pruned: &Decoded,
    wanted: &Wanted,
    shown: &dyn Fn(usize) -> String,
) -> Result<(), String> {
    pruned
        .array
        .to_data()
        .validate_full()
        .map_err(|e| e.to_string())?;
    let (a, b) = (select(&whole.array, wanted), select(&pruned.array, wanted));
    for i in 0..whole.errors.len() {
        if pruned.errors[i].is_some() && whole.errors[i].is_none() {
            return Err(format!("refused {:?}: {}", pruned.errors[i], shown(i)));
        }
        if whole.errors[i].is_none() && a.slice(i, 1).to_data() != b.slice(i, 1).to_data() {
            return Err(format!(
                "asked {wanted:?}\nwhole  {:?}\npruned {:?}\n{}",
                a.slice(i, 1),
                b.slice(i, 1),
                shown(i)
            ));
        }
    }
    Ok(())
}
