//! The steering and follow-up queues and their delivery modes.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::agent::conversation::message::AgentMessage;

/// How many queued messages one poll delivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum QueueMode {
    /// One per poll (pi's default).
    #[default]
    #[serde(rename = "one-at-a-time")]
    OneAtATime,
    /// All at once.
    #[serde(rename = "all")]
    All,
}

impl QueueMode {
    /// Parses a mode as pi does: anything but `one-at-a-time` means `all`.
    pub fn parse(mode: &str) -> QueueMode {
        if mode == "one-at-a-time" {
            QueueMode::OneAtATime
        } else {
            QueueMode::All
        }
    }

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueMode::OneAtATime => "one-at-a-time",
            QueueMode::All => "all",
        }
    }
}

/// A message waiting in a queue, with the text the host sees in `queue_update`.
#[derive(Debug, Clone, PartialEq)]
pub struct Queued {
    /// The text as sent.
    pub text: String,
    /// The message delivered.
    pub message: AgentMessage,
    /// The id the host gave it (`clientMessageId`), echoed in `queue_update` and in its
    /// `message_start`, and the handle of `remove_queued`.
    pub client_id: Option<String>,
}

/// A queue with its mode.
#[derive(Debug, Default)]
pub struct Queue {
    items: VecDeque<Queued>,
    /// How many each poll delivers.
    pub mode: QueueMode,
}

impl Queue {
    /// An empty queue with a mode.
    pub fn with_mode(mode: QueueMode) -> Queue {
        Queue {
            items: VecDeque::new(),
            mode,
        }
    }

    /// Adds a message.
    pub fn push(&mut self, item: Queued) {
        self.items.push_back(item);
    }

    /// Takes what one poll delivers.
    pub fn poll(&mut self) -> Vec<Queued> {
        match self.mode {
            QueueMode::All => self.items.drain(..).collect(),
            QueueMode::OneAtATime => self.items.pop_front().into_iter().collect(),
        }
    }

    /// Takes everything.
    pub fn drain(&mut self) -> Vec<Queued> {
        self.items.drain(..).collect()
    }

    /// The messages waiting, in order.
    pub fn items(&self) -> impl Iterator<Item = &Queued> {
        self.items.iter()
    }

    /// Takes out the message with the host's id `client_id`; false when none has it.
    pub fn remove(&mut self, client_id: &str) -> bool {
        let before = self.items.len();
        self.items
            .retain(|q| q.client_id.as_deref() != Some(client_id));
        self.items.len() != before
    }

    /// The texts waiting.
    pub fn texts(&self) -> Vec<String> {
        self.items.iter().map(|q| q.text.clone()).collect()
    }

    /// How many are waiting.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when none are waiting.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}
