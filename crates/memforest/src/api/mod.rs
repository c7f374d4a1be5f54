//! The `Memory` API a user picks up first (Mem0's verbs, with MemForest's time semantics):
//! [`Memory::add`] one exchange at a time, [`Memory::search`], [`Memory::context`],
//! [`Memory::get`], [`Memory::list`], [`Memory::delete`] (a memory, a session, a user),
//! [`Memory::profile`], [`Memory::messages`], [`Memory::user_stats`]. Users are plain strings; memories are named by [`MemoryId`]s.
//!
//! [`Memory::add`]: crate::Memory::add
//! [`Memory::search`]: crate::Memory::search
//! [`Memory::context`]: crate::Memory::context
//! [`Memory::get`]: crate::Memory::get
//! [`Memory::list`]: crate::Memory::list
//! [`Memory::delete`]: crate::Memory::delete
//! [`Memory::profile`]: crate::Memory::profile
//! [`Memory::user_stats`]: crate::Memory::user_stats
//! [`Memory::messages`]: crate::Memory::messages
//! [`Memory::update`]: crate::Memory::update
//! [`Memory::history`]: crate::Memory::history

mod add;
mod delete;
mod id;
mod message;
mod record;
mod search;
mod session;
mod stats;
mod user;
mod version;

pub use add::{AddOptions, Added};
pub use delete::Deleted;
pub use id::{BadMemoryId, MemoryId};
pub use message::Message;
pub use record::{ListOptions, MemoryRecord};
pub use search::{Hit, SearchOptions, Source, MAX_K};
pub use stats::UserStats;
pub use version::UPDATES_SESSION;
pub(crate) use version::{is_version_attribute, replaced_by_update, version_key_in};
