//! The group coordinator of the classic consumer-group protocol (JoinGroup, SyncGroup,
//! Heartbeat, LeaveGroup) and the committed offsets (OffsetCommit, OffsetFetch), as Kafka's
//! `GroupCoordinator` runs them for one node: a rebalance waits for every member to rejoin (or
//! its rebalance timeout), the leader's assignment is handed to each member, a member that
//! stops heartbeating is removed after its session timeout. Committed offsets start as the
//! backup's `__consumer_offsets` left them and new commits are kept in the state directory.

use super::state::{Commit, OffsetStore};
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::{
    GroupId, HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, SyncGroupRequest,
    SyncGroupResponse,
};
use kafka_protocol::protocol::StrBytes;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

use super::codes::code;

/// Kafka's `group.min.session.timeout.ms` and `group.max.session.timeout.ms` defaults.
const MIN_SESSION_MS: i32 = 6_000;
const MAX_SESSION_MS: i32 = 1_800_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Empty => "Empty",
            State::PreparingRebalance => "PreparingRebalance",
            State::CompletingRebalance => "CompletingRebalance",
            State::Stable => "Stable",
        }
    }
}

struct Member {
    id: String,
    instance_id: Option<String>,
    client_id: String,
    client_host: String,
    session_timeout: Duration,
    rebalance_timeout: Duration,
    protocols: Vec<(String, bytes::Bytes)>,
    assignment: bytes::Bytes,
    last_heartbeat: Instant,
    join: Option<oneshot::Sender<JoinGroupResponse>>,
    sync: Option<oneshot::Sender<SyncGroupResponse>>,
}

struct Group {
    state: State,
    generation: i32,
    protocol_type: Option<String>,
    protocol: Option<String>,
    leader: Option<String>,
    members: BTreeMap<String, Member>,
    /// Member ids handed out with MEMBER_ID_REQUIRED, not yet joined.
    pending: HashMap<String, Instant>,
    /// Counts rebalances, so that a timer of an earlier one does nothing.
    rebalance: u64,
    /// A rebalance of an empty group completes no earlier than this (the initial delay).
    join_not_before: Instant,
}

impl Group {
    fn new() -> Self {
        Group {
            state: State::Empty,
            generation: 0,
            protocol_type: None,
            protocol: None,
            leader: None,
            members: BTreeMap::new(),
            pending: HashMap::new(),
            rebalance: 0,
            join_not_before: Instant::now(),
        }
    }
}

/// The coordinator of every group: their members and their committed offsets.
pub struct Coordinator {
    groups: Mutex<HashMap<String, Group>>,
    /// Committed offsets.
    pub offsets: OffsetStore,
    /// How long a rebalance of an empty group waits for more members to join
    /// (`group.initial.rebalance.delay.ms`).
    initial_delay: Duration,
}

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn join_error(code: i16, member_id: &str) -> JoinGroupResponse {
    let mut r = JoinGroupResponse::default();
    r.error_code = code;
    r.generation_id = -1;
    r.member_id = s(member_id);
    r
}

fn sync_error(code: i16) -> SyncGroupResponse {
    let mut r = SyncGroupResponse::default();
    r.error_code = code;
    r
}

impl Coordinator {
    /// A coordinator whose committed offsets are `offsets`.
    pub fn new(offsets: OffsetStore, initial_delay: Duration) -> Arc<Self> {
        Arc::new(Coordinator {
            groups: Mutex::new(HashMap::new()),
            offsets,
            initial_delay,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Group>> {
        self.groups.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// JoinGroup: answered once the rebalance the join starts (or joins) completes.
    pub async fn join(
        self: &Arc<Self>,
        request: JoinGroupRequest,
        version: i16,
        client_id: &str,
        client_host: &str,
    ) -> JoinGroupResponse {
        let group_id = request.group_id.0.to_string();
        let member_id = request.member_id.to_string();
        if group_id.is_empty() {
            return join_error(code::INVALID_GROUP_ID, &member_id);
        }
        if !(MIN_SESSION_MS..=MAX_SESSION_MS).contains(&request.session_timeout_ms) {
            return join_error(code::INVALID_SESSION_TIMEOUT, &member_id);
        }
        let protocols: Vec<(String, bytes::Bytes)> = request
            .protocols
            .iter()
            .map(|p| (p.name.to_string(), p.metadata.clone()))
            .collect();
        let protocol_type = request.protocol_type.to_string();
        let receiver = {
            let mut groups = self.lock();
            let group = groups.entry(group_id.clone()).or_insert_with(Group::new);
            if protocols.is_empty()
                || group.state != State::Empty
                    && (group.protocol_type.as_deref() != Some(&protocol_type)
                        || !group.members.values().all(|m| {
                            m.protocols
                                .iter()
                                .any(|(n, _)| protocols.iter().any(|(p, _)| p == n))
                        }))
            {
                return join_error(code::INCONSISTENT_GROUP_PROTOCOL, &member_id);
            }
            let member_id = if member_id.is_empty() {
                let id = format!("{client_id}-{}", uuid_text());
                if version >= 4 {
                    // KIP-394: the member joins again with its id.
                    group.pending.insert(id.clone(), Instant::now());
                    return join_error(code::MEMBER_ID_REQUIRED, &id);
                }
                id
            } else if group.members.contains_key(&member_id)
                || group.pending.remove(&member_id).is_some()
            {
                member_id
            } else {
                return join_error(code::UNKNOWN_MEMBER_ID, &member_id);
            };
            let (sender, receiver) = oneshot::channel();
            let now = Instant::now();
            let member = group.members.entry(member_id.clone()).or_insert(Member {
                id: member_id.clone(),
                instance_id: None,
                client_id: client_id.to_string(),
                client_host: client_host.to_string(),
                session_timeout: Duration::ZERO,
                rebalance_timeout: Duration::ZERO,
                protocols: Vec::new(),
                assignment: bytes::Bytes::new(),
                last_heartbeat: now,
                join: None,
                sync: None,
            });
            member.instance_id = request.group_instance_id.as_ref().map(|i| i.to_string());
            member.session_timeout = Duration::from_millis(request.session_timeout_ms as u64);
            member.rebalance_timeout =
                Duration::from_millis(request.rebalance_timeout_ms.max(0) as u64);
            member.protocols = protocols;
            member.last_heartbeat = now;
            member.join = Some(sender);
            if let Some(sync) = member.sync.take() {
                let _ = sync.send(sync_error(code::REBALANCE_IN_PROGRESS));
            }
            group.protocol_type = Some(protocol_type);
            self.prepare_rebalance(&group_id, group);
            self.maybe_complete_join(group);
            receiver
        };
        receiver
            .await
            .unwrap_or_else(|_| join_error(code::UNKNOWN_MEMBER_ID, &request.member_id))
    }

    /// Moves a group into a rebalance (if it is not in one), arming its timer.
    fn prepare_rebalance(self: &Arc<Self>, group_id: &str, group: &mut Group) {
        if group.state == State::PreparingRebalance {
            return;
        }
        let delay = if group.state == State::Empty {
            self.initial_delay
        } else {
            Duration::ZERO
        };
        // Members waiting for an assignment of the old generation rejoin.
        for member in group.members.values_mut() {
            if let Some(sync) = member.sync.take() {
                let _ = sync.send(sync_error(code::REBALANCE_IN_PROGRESS));
            }
        }
        group.state = State::PreparingRebalance;
        group.rebalance += 1;
        group.join_not_before = Instant::now() + delay;
        let rebalance = group.rebalance;
        let timeout = group
            .members
            .values()
            .map(|m| m.rebalance_timeout)
            .max()
            .unwrap_or_default()
            .max(delay);
        let this = Arc::clone(self);
        let id = group_id.to_string();
        if !delay.is_zero() {
            let this = Arc::clone(self);
            let id = id.clone();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let mut groups = this.lock();
                if let Some(group) = groups.get_mut(&id) {
                    if group.rebalance == rebalance {
                        this.maybe_complete_join(group);
                    }
                }
            });
        }
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            let mut groups = this.lock();
            if let Some(group) = groups.get_mut(&id) {
                if group.rebalance == rebalance && group.state == State::PreparingRebalance {
                    // Members that did not rejoin in time leave the group.
                    group.members.retain(|_, m| m.join.is_some());
                    this.complete_join(group);
                }
            }
        });
    }

    /// Completes the join phase when every member has rejoined (and the initial delay of an
    /// empty group has passed).
    fn maybe_complete_join(&self, group: &mut Group) {
        if group.state != State::PreparingRebalance {
            return;
        }
        if Instant::now() >= group.join_not_before
            && group.members.values().all(|m| m.join.is_some())
        {
            self.complete_join(group);
        }
    }

    fn complete_join(&self, group: &mut Group) {
        group.generation += 1;
        if group.members.is_empty() {
            group.state = State::Empty;
            group.protocol = None;
            group.leader = None;
            return;
        }
        // The protocol: the first of the leader's that every member supports.
        if group
            .leader
            .as_ref()
            .is_none_or(|l| !group.members.contains_key(l))
        {
            group.leader = group.members.keys().next().cloned();
        }
        let leader = group.leader.clone().unwrap_or_default();
        let protocol = group.members[&leader]
            .protocols
            .iter()
            .map(|(n, _)| n.clone())
            .find(|n| {
                group
                    .members
                    .values()
                    .all(|m| m.protocols.iter().any(|(p, _)| p == n))
            });
        group.protocol = protocol.clone();
        group.state = State::CompletingRebalance;
        let protocol = protocol.unwrap_or_default();
        let members: Vec<JoinGroupResponseMember> = group
            .members
            .values()
            .map(|m| {
                let mut r = JoinGroupResponseMember::default();
                r.member_id = s(&m.id);
                r.group_instance_id = m.instance_id.as_deref().map(s);
                r.metadata = m
                    .protocols
                    .iter()
                    .find(|(n, _)| *n == protocol)
                    .map(|(_, b)| b.clone())
                    .unwrap_or_default();
                r
            })
            .collect();
        for member in group.members.values_mut() {
            let mut r = JoinGroupResponse::default();
            r.generation_id = group.generation;
            r.protocol_type = group.protocol_type.as_deref().map(s);
            r.protocol_name = Some(s(&protocol));
            r.leader = s(&leader);
            r.member_id = s(&member.id);
            if member.id == leader {
                r.members = members.clone();
            }
            member.last_heartbeat = Instant::now();
            if let Some(join) = member.join.take() {
                let _ = join.send(r);
            }
        }
    }

    /// SyncGroup: the leader's assignment handed to each member.
    pub async fn sync(&self, request: SyncGroupRequest) -> SyncGroupResponse {
        let group_id = request.group_id.0.to_string();
        let member_id = request.member_id.to_string();
        let receiver = {
            let mut groups = self.lock();
            let Some(group) = groups.get_mut(&group_id) else {
                return sync_error(code::UNKNOWN_MEMBER_ID);
            };
            if !group.members.contains_key(&member_id) {
                return sync_error(code::UNKNOWN_MEMBER_ID);
            }
            if request.generation_id != group.generation {
                return sync_error(code::ILLEGAL_GENERATION);
            }
            let answer = |group: &Group, assignment: bytes::Bytes| {
                let mut r = SyncGroupResponse::default();
                r.protocol_type = group.protocol_type.as_deref().map(s);
                r.protocol_name = group.protocol.as_deref().map(s);
                r.assignment = assignment;
                r
            };
            match group.state {
                State::Empty | State::PreparingRebalance => {
                    return sync_error(code::REBALANCE_IN_PROGRESS)
                }
                State::Stable => {
                    let assignment = group.members[&member_id].assignment.clone();
                    return answer(group, assignment);
                }
                State::CompletingRebalance => {}
            }
            if group.leader.as_deref() == Some(member_id.as_str()) {
                let given: HashMap<String, bytes::Bytes> = request
                    .assignments
                    .iter()
                    .map(|a| (a.member_id.to_string(), a.assignment.clone()))
                    .collect();
                for member in group.members.values_mut() {
                    member.assignment = given.get(&member.id).cloned().unwrap_or_default();
                }
                group.state = State::Stable;
                let ids: Vec<String> = group.members.keys().cloned().collect();
                for id in ids {
                    let assignment = group.members[&id].assignment.clone();
                    let response = answer(group, assignment);
                    if let Some(sync) = group.members.get_mut(&id).and_then(|m| m.sync.take()) {
                        let _ = sync.send(response);
                    }
                }
                let assignment = group.members[&member_id].assignment.clone();
                return answer(group, assignment);
            }
            let (sender, receiver) = oneshot::channel();
            if let Some(member) = group.members.get_mut(&member_id) {
                member.sync = Some(sender);
                member.last_heartbeat = Instant::now();
            }
            receiver
        };
        receiver
            .await
            .unwrap_or_else(|_| sync_error(code::REBALANCE_IN_PROGRESS))
    }

    /// Heartbeat: keeps a member's session, and tells it of a rebalance.
    pub fn heartbeat(&self, request: &HeartbeatRequest) -> i16 {
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(request.group_id.0.as_str()) else {
            return code::UNKNOWN_MEMBER_ID;
        };
        let Some(member) = group.members.get_mut(request.member_id.as_str()) else {
            return code::UNKNOWN_MEMBER_ID;
        };
        member.last_heartbeat = Instant::now();
        if request.generation_id != group.generation {
            return code::ILLEGAL_GENERATION;
        }
        match group.state {
            State::Stable => code::NONE,
            _ => code::REBALANCE_IN_PROGRESS,
        }
    }

    /// LeaveGroup: the members leave, and the rest rebalance. Returns each member's code.
    pub fn leave(self: &Arc<Self>, group_id: &GroupId, members: &[String]) -> Vec<i16> {
        let id = group_id.0.to_string();
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(&id) else {
            return vec![code::UNKNOWN_MEMBER_ID; members.len()];
        };
        let codes: Vec<i16> = members
            .iter()
            .map(|m| match group.members.remove(m) {
                Some(member) => {
                    if let Some(join) = member.join {
                        let _ = join.send(join_error(code::UNKNOWN_MEMBER_ID, &member.id));
                    }
                    code::NONE
                }
                None => code::UNKNOWN_MEMBER_ID,
            })
            .collect();
        if codes.contains(&code::NONE) {
            self.membership_changed(&id, group);
        }
        codes
    }

    fn membership_changed(self: &Arc<Self>, id: &str, group: &mut Group) {
        if group.members.is_empty() {
            group.state = State::Empty;
            group.generation += 1;
            group.leader = None;
            group.protocol = None;
        } else if group.state == State::PreparingRebalance {
            self.maybe_complete_join(group);
        } else {
            self.prepare_rebalance(id, group);
        }
    }

    /// Removes members whose session ran out (called periodically).
    pub fn expire_sessions(self: &Arc<Self>) {
        let now = Instant::now();
        let mut groups = self.lock();
        for (id, group) in groups.iter_mut() {
            let before = group.members.len();
            // Members waiting in a join are kept by the rebalance timer instead.
            group
                .members
                .retain(|_, m| m.join.is_some() || now - m.last_heartbeat <= m.session_timeout);
            group
                .pending
                .retain(|_, since| now - *since <= Duration::from_secs(MAX_SESSION_MS as u64));
            if group.members.len() != before {
                self.membership_changed(id, group);
            }
        }
    }

    /// Whether a commit from `member_id` at `generation` may be taken: error code.
    pub fn check_commit(&self, group_id: &str, member_id: &str, generation: i32) -> i16 {
        let groups = self.lock();
        let group = groups.get(group_id);
        if generation < 0 && member_id.is_empty() {
            // A consumer that assigns itself partitions commits outside any generation.
            return match group {
                Some(g) if !g.members.is_empty() => code::NON_EMPTY_GROUP,
                _ => code::NONE,
            };
        }
        let Some(group) = group else {
            return code::UNKNOWN_MEMBER_ID;
        };
        if !group.members.contains_key(member_id) {
            return code::UNKNOWN_MEMBER_ID;
        }
        if generation != group.generation {
            return code::ILLEGAL_GENERATION;
        }
        if group.state == State::CompletingRebalance || group.state == State::PreparingRebalance {
            return code::REBALANCE_IN_PROGRESS;
        }
        code::NONE
    }

    /// Commits offsets (checked with [`Coordinator::check_commit`]).
    pub fn commit(&self, commits: Vec<Commit>) -> crate::error::Result<()> {
        self.offsets.commit(commits)
    }

    /// Every group known: with members here, or with offsets committed (in the backup or
    /// since), with its state and protocol type.
    pub fn list(&self) -> Vec<ListedGroup> {
        let groups = self.lock();
        let mut out: BTreeMap<String, ListedGroup> = BTreeMap::new();
        for id in self.offsets.groups() {
            let mut g = ListedGroup::default();
            g.group_id = GroupId(s(&id));
            g.group_state = s("Empty");
            g.group_type = s("classic");
            out.insert(id, g);
        }
        for (id, group) in groups.iter() {
            if group.members.is_empty() && !out.contains_key(id) {
                continue;
            }
            let mut g = ListedGroup::default();
            g.group_id = GroupId(s(id));
            g.protocol_type = s(group.protocol_type.as_deref().unwrap_or(""));
            g.group_state = s(group.state.name());
            g.group_type = s("classic");
            out.insert(id.clone(), g);
        }
        out.into_values().collect()
    }

    /// DescribeGroups of one group.
    pub fn describe(&self, group_id: &str, version: i16) -> DescribedGroup {
        let groups = self.lock();
        let mut d = DescribedGroup::default();
        d.group_id = GroupId(s(group_id));
        d.authorized_operations = i32::MIN;
        match groups.get(group_id) {
            Some(group) => {
                d.group_state = s(group.state.name());
                d.protocol_type = s(group.protocol_type.as_deref().unwrap_or(""));
                d.protocol_data = s(group.protocol.as_deref().unwrap_or(""));
                let protocol = group.protocol.clone().unwrap_or_default();
                d.members = group
                    .members
                    .values()
                    .map(|m| {
                        let mut dm = DescribedGroupMember::default();
                        dm.member_id = s(&m.id);
                        dm.group_instance_id = m.instance_id.as_deref().map(s);
                        dm.client_id = s(&m.client_id);
                        dm.client_host = s(&m.client_host);
                        if group.state == State::Stable {
                            dm.member_metadata = m
                                .protocols
                                .iter()
                                .find(|(n, _)| *n == protocol)
                                .map(|(_, b)| b.clone())
                                .unwrap_or_default();
                            dm.member_assignment = m.assignment.clone();
                        }
                        dm
                    })
                    .collect();
            }
            None if self.offsets.has_group(group_id) => {
                d.group_state = s("Empty");
            }
            None => {
                d.group_state = s("Dead");
                if version >= 6 {
                    d.error_code = code::GROUP_ID_NOT_FOUND;
                    d.error_message = Some(s(&format!("Group {group_id} not found.")));
                }
            }
        }
        d
    }
}

/// A random version 4 UUID's text, for member ids.
fn uuid_text() -> String {
    let mut bytes = [0u8; 16];
    fill_random(&mut bytes);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(bytes).hyphenated().to_string()
}

/// Bytes that differ from call to call and process to process (member ids need only be
/// unique, not secret).
fn fill_random(out: &mut [u8]) {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    for chunk in out.chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        let v = h.finish().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}
