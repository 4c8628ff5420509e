//! DescribeConfigs: a topic's configuration as the dead cluster's KRaft metadata recorded its
//! overrides, over Kafka's defaults (Kafka 4.x's `LogConfig` defaults for the configurations
//! clients and tools most often ask for). A broker's configuration is not in a backup: its
//! answer is empty.

use super::shared::Shared;
use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
use kafka_protocol::protocol::StrBytes;

/// Kafka's resource types.
const TOPIC: i8 = 2;
/// Config sources.
const DYNAMIC_TOPIC_CONFIG: i8 = 1;
const DEFAULT_CONFIG: i8 = 5;

/// Kafka's topic configuration defaults (name, value).
const DEFAULTS: &[(&str, &str)] = &[
    ("cleanup.policy", "delete"),
    ("compression.type", "producer"),
    ("delete.retention.ms", "86400000"),
    ("file.delete.delay.ms", "60000"),
    ("flush.messages", "9223372036854775807"),
    ("flush.ms", "9223372036854775807"),
    ("index.interval.bytes", "4096"),
    ("max.compaction.lag.ms", "9223372036854775807"),
    ("max.message.bytes", "1048588"),
    ("message.timestamp.after.max.ms", "3600000"),
    ("message.timestamp.before.max.ms", "9223372036854775807"),
    ("message.timestamp.type", "CreateTime"),
    ("min.cleanable.dirty.ratio", "0.5"),
    ("min.compaction.lag.ms", "0"),
    ("min.insync.replicas", "1"),
    ("retention.bytes", "-1"),
    ("retention.ms", "604800000"),
    ("segment.bytes", "1073741824"),
    ("segment.index.bytes", "10485760"),
    ("segment.jitter.ms", "0"),
    ("segment.ms", "604800000"),
    ("unclean.leader.election.enable", "false"),
];

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// The answer to a DescribeConfigs request.
pub fn describe(shared: &Shared, request: DescribeConfigsRequest) -> DescribeConfigsResponse {
    let mut r = DescribeConfigsResponse::default();
    for resource in request.resources {
        let mut result = DescribeConfigsResult::default();
        result.resource_type = resource.resource_type;
        result.resource_name = resource.resource_name.clone();
        if resource.resource_type == TOPIC {
            let name = resource.resource_name.as_str();
            if !shared.catalog.topics.contains_key(name) {
                result.error_code = super::codes::code::UNKNOWN_TOPIC_OR_PARTITION;
                result.error_message = Some(s(&format!("Topic {name} is not served")));
                r.results.push(result);
                continue;
            }
            let overrides = shared.topic_configs.get(name);
            for (key, default) in DEFAULTS {
                // No keys (null or an empty list) asks for every configuration.
                if resource.configuration_keys.as_ref().is_some_and(|keys| {
                    !keys.is_empty() && !keys.iter().any(|k| k.as_str() == *key)
                }) {
                    continue;
                }
                let set = overrides.and_then(|o| o.get(*key));
                let mut c = DescribeConfigsResourceResult::default();
                c.name = s(key);
                c.value = Some(s(set.map_or(*default, String::as_str)));
                c.read_only = false;
                c.config_source = if set.is_some() {
                    DYNAMIC_TOPIC_CONFIG
                } else {
                    DEFAULT_CONFIG
                };
                result.configs.push(c);
            }
            // Overrides Kafka has no default listed for above.
            if let Some(o) = overrides {
                for (key, value) in o {
                    if DEFAULTS.iter().any(|(k, _)| k == key) {
                        continue;
                    }
                    let mut c = DescribeConfigsResourceResult::default();
                    c.name = s(key);
                    c.value = Some(s(value));
                    c.config_source = DYNAMIC_TOPIC_CONFIG;
                    result.configs.push(c);
                }
            }
        }
        r.results.push(result);
    }
    r
}
