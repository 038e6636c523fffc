//! Coalesced reads of sessions with their person. Every access token that names a session is
//! checked against it on each use (introspection, userinfo, token exchange), so under load many
//! such reads wait at the same moment. One reader task takes all that are waiting and answers them
//! with one query: the database sees one statement a round instead of one a token, and every
//! caller still gets rows read after it asked, never a remembered copy.

use std::collections::HashMap;

use tokio::sync::{mpsc, oneshot};

use crate::kernel::ids::SessionId;

use super::Store;
use super::sessions::{self, Session};
use super::users::User;

/// Most sessions one query reads.
const BATCH: usize = 64;

type Found = Option<(Session, User)>;

#[derive(Debug)]
struct Lookup {
    session_id: String,
    reply: oneshot::Sender<Result<Found, String>>,
}

#[derive(Debug, Clone)]
pub struct SessionReads {
    sender: mpsc::Sender<Lookup>,
}

impl SessionReads {
    /// Starts the reader task; it ends when the last handle is dropped.
    pub fn start(store: Store) -> Self {
        let (sender, mut receiver) = mpsc::channel::<Lookup>(4096);
        tokio::spawn(async move {
            let mut round = Vec::with_capacity(BATCH);
            // Waits for one lookup, then takes every lookup already waiting, up to a round.
            while receiver.recv_many(&mut round, BATCH).await > 0 {
                answer(&store, std::mem::take(&mut round)).await;
            }
        });
        Self { sender }
    }

    /// The session with this id and its person, read from the database after this call.
    pub async fn find_with_person(&self, session_id: &str) -> anyhow::Result<Found> {
        let (reply, found) = oneshot::channel();
        let lookup = Lookup { session_id: session_id.to_owned(), reply };
        self.sender.send(lookup).await.map_err(|_| anyhow::anyhow!("the session reader has stopped"))?;
        found.await?.map_err(|error| anyhow::anyhow!("cannot read the session: {error}"))
    }
}

/// Reads every session the round asks for, once each, and answers each caller.
async fn answer(store: &Store, round: Vec<Lookup>) {
    let mut ids: Vec<&str> = round.iter().map(|lookup| lookup.session_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let read = sessions::find_all_with_person(store.pool(), &ids).await.map_err(|error| error.to_string());
    let by_id: Result<HashMap<SessionId, (Session, User)>, String> =
        read.map(|rows| rows.into_iter().map(|(session, user)| (session.id.clone(), (session, user))).collect());
    for Lookup { session_id, reply } in round {
        let found = match &by_id {
            Ok(rows) => Ok(rows.get(session_id.as_str()).cloned()),
            Err(error) => Err(error.clone()),
        };
        // A caller that stopped waiting needs no answer.
        let _ = reply.send(found);
    }
}
