//! The compiled Avro decoder against `arrow-avro` (the oracle, `oracle::oracle`) on generated
//! schemas: a random writer schema (records, arrays, maps, enums, fixed, unions, logical
//! types, nested), a random evolution of it as the reader schema (fields added with
//! defaults, dropped, reordered, renamed through aliases, promoted; enum symbols reordered,
//! added and dropped with a default; unions reordered; types made nullable), and random
//! values written with the writer schema and with the reader schema itself, interleaved.
//! Both decoders must give the same column and fail the same payloads.
//!
//! The evolutions are those the specification and `arrow-avro` read alike; where they differ
//! (`tests.rs` says where) the specification's rule has its own test.

use std::collections::HashSet;

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Value as Json};

use crate::values::avro::tests::{same_as_oracle, zz};

/// A generated Avro type (named types are named by [`name_all`]).
#[derive(Clone, Debug)]
enum T {
    Bool,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    Str,
    /// `int` with a logical type (`date`, `time-millis`).
    IntLogical(&'static str),
    /// `long` with a logical type.
    LongLogical(&'static str),
    /// `bytes` decimal of this precision.
    Decimal(u32),
    Uuid,
    Fixed {
        name: String,
        size: usize,
    },
    Enum {
        name: String,
        symbols: Vec<String>,
        default: Option<String>,
    },
    Array(Box<T>),
    Map(Box<T>),
    Record {
        name: String,
        fields: Vec<F>,
    },
    /// `[null, T]` (`true`) or `[T, null]`.
    Nullable(Box<T>, bool),
    /// A union of other kinds, `null` at a place or not.
    Union(Vec<T>, Option<usize>),
}

/// A record's field.
#[derive(Clone, Debug)]
struct F {
    name: String,
    aliases: Vec<String>,
    ty: T,
    default: Option<Json>,
}

/// A value of a [`T`].
#[derive(Clone, Debug)]
enum V {
    Null,
    Bool(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Bytes(Vec<u8>),
    Index(usize),
    Items(Vec<V>),
    Entries(Vec<(String, V)>),
    Branch(usize, Box<V>),
}

/// What a union branch's kind is, for a union's branches to differ.
fn kind(t: &T) -> &'static str {
    match t {
        T::Bool => "boolean",
        T::Int | T::IntLogical(_) => "int",
        T::Long | T::LongLogical(_) => "long",
        T::Float => "float",
        T::Double => "double",
        T::Bytes | T::Decimal(_) => "bytes",
        T::Str | T::Uuid => "string",
        T::Fixed { .. } => "fixed",
        T::Enum { .. } => "enum",
        T::Array(_) => "array",
        T::Map(_) => "map",
        T::Record { .. } => "record",
        T::Nullable(..) | T::Union(..) => "union",
    }
}

fn leaf() -> impl Strategy<Value = T> {
    prop_oneof![
        Just(T::Bool),
        Just(T::Int),
        Just(T::Long),
        Just(T::Float),
        Just(T::Double),
        Just(T::Bytes),
        Just(T::Str),
        prop_oneof![Just("date"), Just("time-millis")].prop_map(T::IntLogical),
        prop_oneof![
            Just("timestamp-millis"),
            Just("timestamp-micros"),
            Just("local-timestamp-micros"),
            Just("time-micros")
        ]
        .prop_map(T::LongLogical),
        prop_oneof![Just(9u32), Just(30u32), Just(50u32)].prop_map(T::Decimal),
        Just(T::Uuid),
        (1usize..5).prop_map(|size| T::Fixed {
            name: String::new(),
            size
        }),
        (1usize..5).prop_map(|n| T::Enum {
            name: String::new(),
            symbols: (0..n).map(|i| format!("S{i}")).collect(),
            default: None,
        }),
    ]
}

fn record(fields: Vec<T>) -> T {
    T::Record {
        name: String::new(),
        fields: fields
            .into_iter()
            .enumerate()
            .map(|(i, ty)| F {
                name: format!("f{i}"),
                aliases: Vec::new(),
                ty,
                default: None,
            })
            .collect(),
    }
}

fn any_type() -> impl Strategy<Value = T> {
    leaf().prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| T::Array(Box::new(t))),
            inner.clone().prop_map(|t| T::Map(Box::new(t))),
            prop::collection::vec(inner.clone(), 1..6).prop_map(record),
            (inner.clone(), any::<bool>()).prop_map(|(t, first)| match t {
                t @ (T::Nullable(..) | T::Union(..)) => t,
                t => T::Nullable(Box::new(t), first),
            }),
            (prop::collection::vec(inner, 1..4), 0usize..5).prop_map(|(ts, null)| {
                let mut seen = HashSet::new();
                let ts: Vec<T> = ts
                    .into_iter()
                    .filter(|t| kind(t) != "union" && seen.insert(kind(t)))
                    .collect();
                let null = (null <= ts.len()).then_some(null);
                if ts.is_empty() && null.is_none() {
                    return T::Int;
                }
                T::Union(ts, null)
            }),
        ]
    })
}

/// Names the named types that have none (`prefix` and a number, in the order met).
fn name_all(t: &mut T, prefix: &str, next: &mut usize) {
    let mut fresh = |name: &mut String| {
        if name.is_empty() {
            *name = format!("{prefix}{next}");
            *next += 1;
        }
    };
    match t {
        T::Fixed { name, .. } | T::Enum { name, .. } => fresh(name),
        T::Record { name, fields } => {
            fresh(name);
            for f in fields {
                name_all(&mut f.ty, prefix, next);
            }
        }
        T::Array(t) | T::Map(t) | T::Nullable(t, _) => name_all(t, prefix, next),
        T::Union(ts, _) => ts.iter_mut().for_each(|t| name_all(t, prefix, next)),
        _ => {}
    }
}

/// The schema's JSON.
fn schema(t: &T) -> Json {
    match t {
        T::Bool => json!("boolean"),
        T::Int => json!("int"),
        T::Long => json!("long"),
        T::Float => json!("float"),
        T::Double => json!("double"),
        T::Bytes => json!("bytes"),
        T::Str => json!("string"),
        T::IntLogical(l) => json!({"type": "int", "logicalType": l}),
        T::LongLogical(l) => json!({"type": "long", "logicalType": l}),
        T::Decimal(p) => json!({"type": "bytes", "logicalType": "decimal", "precision": p,
            "scale": 2}),
        T::Uuid => json!({"type": "string", "logicalType": "uuid"}),
        T::Fixed { name, size } => json!({"type": "fixed", "name": name, "size": size}),
        T::Enum {
            name,
            symbols,
            default,
        } => match default {
            Some(d) => json!({"type": "enum", "name": name, "symbols": symbols, "default": d}),
            None => json!({"type": "enum", "name": name, "symbols": symbols}),
        },
        T::Array(t) => json!({"type": "array", "items": schema(t)}),
        T::Map(t) => json!({"type": "map", "values": schema(t)}),
        T::Record { name, fields } => {
            let fields: Vec<Json> = fields
                .iter()
                .map(|f| {
                    let mut j = json!({"name": f.name, "type": schema(&f.ty)});
                    if !f.aliases.is_empty() {
                        j["aliases"] = json!(f.aliases);
                    }
                    if let Some(d) = &f.default {
                        j["default"] = d.clone();
                    }
                    j
                })
                .collect();
            json!({"type": "record", "name": name, "namespace": "gen", "fields": fields})
        }
        T::Nullable(t, true) => json!(["null", schema(t)]),
        T::Nullable(t, false) => json!([schema(t), "null"]),
        T::Union(ts, null) => {
            let mut branches: Vec<Json> = ts.iter().map(schema).collect();
            if let Some(at) = null {
                branches.insert(*at, json!("null"));
            }
            Json::Array(branches)
        }
    }
}

/// A value of `t`.
fn value(t: &T) -> BoxedStrategy<V> {
    match t {
        T::Bool => any::<bool>().prop_map(V::Bool).boxed(),
        T::Int | T::IntLogical(_) => any::<i32>().prop_map(V::Int).boxed(),
        T::Long | T::LongLogical(_) => prop_oneof![any::<i64>(), -1000i64..1000]
            .prop_map(V::Long)
            .boxed(),
        T::Float => (-1e6f32..1e6).prop_map(V::Float).boxed(),
        T::Double => prop_oneof![-1e300f64..1e300, -10.0f64..10.0]
            .prop_map(V::Double)
            .boxed(),
        T::Bytes => prop::collection::vec(any::<u8>(), 0..6)
            .prop_map(V::Bytes)
            .boxed(),
        T::Decimal(_) => prop::collection::vec(any::<u8>(), 1..5)
            .prop_map(V::Bytes)
            .boxed(),
        T::Str | T::Uuid => "[a-zé0-9 ]{0,6}"
            .prop_map(|s| V::Bytes(s.into_bytes()))
            .boxed(),
        T::Fixed { size, .. } => prop::collection::vec(any::<u8>(), *size)
            .prop_map(V::Bytes)
            .boxed(),
        T::Enum { symbols, .. } => (0..symbols.len()).prop_map(V::Index).boxed(),
        T::Array(t) => prop::collection::vec(value(t), 0..4)
            .prop_map(V::Items)
            .boxed(),
        T::Map(t) => prop::collection::vec(("[a-z]{1,3}", value(t)), 0..4)
            .prop_map(V::Entries)
            .boxed(),
        T::Record { fields, .. } => {
            let values: Vec<BoxedStrategy<V>> = fields.iter().map(|f| value(&f.ty)).collect();
            values.prop_map(V::Items).boxed()
        }
        T::Nullable(t, first) => {
            let (null, other) = if *first { (0, 1) } else { (1, 0) };
            prop_oneof![
                Just(V::Branch(null, Box::new(V::Null))),
                value(t).prop_map(move |v| V::Branch(other, Box::new(v))),
            ]
            .boxed()
        }
        T::Union(ts, null) => {
            let null = *null;
            let place = move |i: usize| match null {
                Some(at) if i >= at => i + 1,
                _ => i,
            };
            let mut options: Vec<BoxedStrategy<V>> = ts
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    value(t)
                        .prop_map(move |v| V::Branch(place(i), Box::new(v)))
                        .boxed()
                })
                .collect();
            if let Some(at) = null {
                options.push(Just(V::Branch(at, Box::new(V::Null))).boxed());
            }
            prop::strategy::Union::new(options).boxed()
        }
    }
}

/// `v` in Avro's binary encoding.
fn encode(v: &V, out: &mut Vec<u8>) {
    match v {
        V::Null => {}
        V::Bool(b) => out.push(u8::from(*b)),
        V::Int(i) => out.extend(zz(i64::from(*i))),
        V::Long(l) => out.extend(zz(*l)),
        V::Float(f) => out.extend(f.to_le_bytes()),
        V::Double(d) => out.extend(d.to_le_bytes()),
        V::Bytes(b) => {
            out.extend(zz(b.len() as i64));
            out.extend(b);
        }
        V::Index(i) => out.extend(zz(*i as i64)),
        V::Items(items) => {
            for item in items {
                encode(item, out);
            }
        }
        V::Entries(entries) => {
            if !entries.is_empty() {
                out.extend(zz(entries.len() as i64));
                for (k, v) in entries {
                    out.extend(zz(k.len() as i64));
                    out.extend(k.as_bytes());
                    encode(v, out);
                }
            }
            out.push(0);
        }
        V::Branch(b, v) => {
            out.extend(zz(*b as i64));
            encode(v, out);
        }
    }
}

/// Encodes `v` of type `t` (arrays are blocks, records their fields).
fn encoded(t: &T, v: &V) -> Vec<u8> {
    fn walk(t: &T, v: &V, out: &mut Vec<u8>) {
        match (t, v) {
            (T::Array(item), V::Items(items)) => {
                if !items.is_empty() {
                    out.extend(zz(items.len() as i64));
                    for i in items {
                        walk(item, i, out);
                    }
                }
                out.push(0);
            }
            (T::Map(value), V::Entries(entries)) => {
                if !entries.is_empty() {
                    out.extend(zz(entries.len() as i64));
                    for (k, v) in entries {
                        out.extend(zz(k.len() as i64));
                        out.extend(k.as_bytes());
                        walk(value, v, out);
                    }
                }
                out.push(0);
            }
            (T::Record { fields, .. }, V::Items(values)) => {
                for (f, v) in fields.iter().zip(values) {
                    walk(&f.ty, v, out);
                }
            }
            (T::Nullable(t, _), V::Branch(b, v)) => {
                out.extend(zz(*b as i64));
                if !matches!(**v, V::Null) {
                    walk(t, v, out);
                }
            }
            (T::Union(ts, null), V::Branch(b, v)) => {
                out.extend(zz(*b as i64));
                let i = match null {
                    Some(at) if *b == *at => return,
                    Some(at) if *b > *at => *b - 1,
                    _ => *b,
                };
                walk(&ts[i], v, out);
            }
            (T::Fixed { .. }, V::Bytes(b)) => out.extend(b),
            _ => encode(v, out),
        }
    }
    let mut out = Vec::new();
    walk(t, v, &mut out);
    out
}

/// A field added by the reader: a type and its default.
fn added() -> impl Strategy<Value = (T, Json)> {
    prop_oneof![
        Just((T::Int, json!(7))),
        Just((T::Long, json!(-1))),
        Just((T::Str, json!("d"))),
        Just((T::Bytes, json!("\u{ff}\u{1}"))),
        Just((T::Bool, json!(true))),
        Just((T::Double, json!(1.5))),
        Just((T::Float, json!(0.5))),
        Just((T::Array(Box::new(T::Int)), json!([1, 2]))),
        Just((T::Map(Box::new(T::Str)), json!({"k": "v"}))),
        Just((T::Nullable(Box::new(T::Str), true), Json::Null)),
        Just((
            T::Enum {
                name: String::new(),
                symbols: vec!["A".into(), "B".into()],
                default: None
            },
            json!("B")
        )),
        Just((
            T::Fixed {
                name: String::new(),
                size: 2
            },
            json!("ab")
        )),
        Just((record(vec![T::Int, T::Str]), json!({"f0": 3, "f1": "x"}))),
        Just((T::Decimal(9), json!("\u{1}\u{0}"))),
        Just((T::LongLogical("timestamp-micros"), json!(5))),
    ]
}

/// A reader schema `t` resolves to (an evolution of the writer's).
fn evolve(t: &T) -> BoxedStrategy<T> {
    let same = Just(t.clone()).boxed();
    let nullable = |s: BoxedStrategy<T>| s.prop_map(|t| T::Nullable(Box::new(t), true)).boxed();
    match t {
        T::Int => prop_oneof![
            4 => Just(T::Int),
            1 => Just(T::Long),
            1 => Just(T::Float),
            1 => Just(T::Double),
            1 => nullable(Just(T::Long).boxed()),
        ]
        .boxed(),
        T::Long => {
            prop_oneof![3 => Just(T::Long), 1 => Just(T::Float), 1 => Just(T::Double)].boxed()
        }
        T::Float => prop_oneof![3 => Just(T::Float), 1 => Just(T::Double)].boxed(),
        T::Str => prop_oneof![3 => Just(T::Str), 1 => Just(T::Bytes), 1 => nullable(same)].boxed(),
        T::Bytes => prop_oneof![3 => Just(T::Bytes), 1 => Just(T::Str)].boxed(),
        T::Enum { name, symbols, .. } => {
            let (name, symbols) = (name.clone(), symbols.clone());
            (Just(symbols).prop_shuffle(), any::<bool>(), any::<bool>())
                .prop_map(move |(mut symbols, extra, drop)| {
                    if extra {
                        symbols.push("X".into());
                    }
                    let mut default = None;
                    if drop && symbols.len() > 1 {
                        symbols.pop();
                        default = Some(symbols[0].clone());
                    }
                    T::Enum {
                        name: name.clone(),
                        symbols,
                        default,
                    }
                })
                .boxed()
        }
        T::Array(item) => evolve(item).prop_map(|t| T::Array(Box::new(t))).boxed(),
        T::Map(v) => evolve(v).prop_map(|t| T::Map(Box::new(t))).boxed(),
        T::Nullable(inner, first) => {
            let first = *first;
            evolve(inner)
                .prop_map(move |t| match t {
                    t @ (T::Nullable(..) | T::Union(..)) => T::Nullable(
                        Box::new(match t {
                            T::Nullable(t, _) => *t,
                            t => t,
                        }),
                        first,
                    ),
                    t => T::Nullable(Box::new(t), first),
                })
                .boxed()
        }
        T::Union(ts, null) => {
            // The same branches in another order.
            let mut all: Vec<Option<T>> = ts.iter().cloned().map(Some).collect();
            if let Some(at) = null {
                all.insert(*at, None);
            }
            Just(all)
                .prop_shuffle()
                .prop_map(|all| {
                    let null = all.iter().position(Option::is_none);
                    T::Union(all.into_iter().flatten().collect(), null)
                })
                .boxed()
        }
        T::Record { name, fields } => {
            let name = name.clone();
            let kept: Vec<BoxedStrategy<Option<F>>> = fields
                .iter()
                .map(|f| {
                    let f = f.clone();
                    (evolve(&f.ty), 0u8..8)
                        .prop_map(move |(ty, roll)| match roll {
                            0 => None,
                            1 => Some(F {
                                name: format!("renamed_{}", f.name),
                                aliases: vec![f.name.clone()],
                                ty,
                                default: None,
                            }),
                            _ => Some(F { ty, ..f.clone() }),
                        })
                        .boxed()
                })
                .collect();
            (kept, prop::collection::vec(added(), 0..3))
                .prop_flat_map(move |(kept, added)| {
                    let mut fields: Vec<F> = kept.into_iter().flatten().collect();
                    let mut added = added;
                    if fields.is_empty() && added.is_empty() {
                        // A record of no fields: arrow-avro fails to build its struct.
                        added.push((T::Int, json!(7)));
                    }
                    for (i, (ty, default)) in added.into_iter().enumerate() {
                        fields.push(F {
                            name: format!("added{i}"),
                            aliases: Vec::new(),
                            ty,
                            default: Some(default),
                        });
                    }
                    let name = name.clone();
                    Just(fields)
                        .prop_shuffle()
                        .prop_map(move |fields| T::Record {
                            name: name.clone(),
                            fields,
                        })
                })
                .boxed()
        }
        _ => same,
    }
}

/// A writer type (mostly a record, as Kafka values are), a reader type it evolves into,
/// values of the writer's and values of the reader's.
fn case() -> impl Strategy<Value = (T, T, Vec<(bool, V)>)> {
    prop_oneof![4 => prop::collection::vec(any_type(), 1..8).prop_map(record), 1 => any_type()]
        .prop_map(|mut t| {
            name_all(&mut t, "W", &mut 0);
            t
        })
        .prop_flat_map(|w| {
            let w2 = w.clone();
            (Just(w), evolve(&w2))
        })
        .prop_map(|(w, mut r)| {
            name_all(&mut r, "A", &mut 0);
            (w, r)
        })
        .prop_flat_map(|(w, r)| {
            let values = prop::collection::vec(
                prop_oneof![
                    3 => value(&w).prop_map(|v| (true, v)),
                    1 => value(&r).prop_map(|v| (false, v)),
                ],
                1..12,
            );
            (Just(w), Just(r), values)
        })
}

/// Cases a run tries: 300, or `KAFKALOG_AVRO_CASES` (a longer run by hand).
fn cases() -> u32 {
    std::env::var("KAFKALOG_AVRO_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300)
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn compiled_decoder_reads_as_arrow_avro_does((w, r, values) in case()) {
        let (wj, rj) = (schema(&w).to_string(), schema(&r).to_string());
        let payloads: Vec<Option<(i64, Vec<u8>)>> = values
            .iter()
            .map(|(by_writer, v)| {
                let (id, t) = if *by_writer { (1, &w) } else { (2, &r) };
                Some((id, encoded(t, v)))
            })
            .collect();
        same_as_oracle(&rj, &[(1, &wj), (2, &rj)], &payloads);
    }
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    })]

    /// A decoder building only some fields (Spark's pruning) reads what the whole decoder
    /// reads of them: what it refuses the whole one refuses, and where the whole one reads a
    /// payload it reads the same parts of it.
    #[test]
    fn a_pruned_decoder_reads_the_parts_the_whole_one_reads(
        (w, r, values) in case(),
        seed in any::<u64>(),
    ) {
        use crate::values::avro::tests::{avro, run, writers};
        use crate::values::wanted_tests::{agrees, die, random_wanted};
        let (wj, rj) = (schema(&w).to_string(), schema(&r).to_string());
        let payloads: Vec<Option<(i64, Vec<u8>)>> = values
            .iter()
            .map(|(by_writer, v)| {
                let (id, t) = if *by_writer { (1, &w) } else { (2, &r) };
                Some((id, encoded(t, v)))
            })
            .collect();
        let ws = writers(&[(1, &wj), (2, &rj)]);
        let whole = crate::values::avro::decoder::decoder(&avro(&rj), ws.clone()).unwrap();
        let wanted = random_wanted(whole.data_type(), &mut die(seed));
        let pruned =
            crate::values::avro::decoder::pruned_decoder(&avro(&rj), ws, &wanted).unwrap();
        let (a, b) = (run(whole.as_ref(), &payloads), run(pruned.as_ref(), &payloads));
        agrees(&a, &b, &wanted, &|i| format!("payload {i}\n{rj}")).map_err(TestCaseError::fail)?;
    }
}
