//! Grouped point-to-point: several sends and receives started together and
//! completed as one (`dt_p2p_group`), so that exchanges which deadlock one
//! call at a time (every rank sending to both ring neighbours before
//! receiving) complete.

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::element::Element;
use crate::error::Result;
use crate::operation::{Operands, NO_STREAM};
use crate::request::Request;
use crate::start;
use crate::tensor::RawTensor;

/// One send or receive of a group; `tag` >= 0 matches the peer's
/// `send`/`recv` (or group op) with that tag.
pub enum P2pOp<'a, T: Element> {
    /// Sends `buf` to rank `peer`.
    Send { buf: &'a [T], peer: i32, tag: i32 },
    /// Receives into `buf` from rank `peer`.
    Recv {
        buf: &'a mut [T],
        peer: i32,
        tag: i32,
    },
}

fn operands<T: Element>(ops: Vec<P2pOp<'_, T>>) -> (Operands, Vec<(sys::dt_p2p_kind, i32, i32)>) {
    let mut tensors = Vec::with_capacity(ops.len());
    let mut described = Vec::with_capacity(ops.len());
    for op in ops {
        match op {
            P2pOp::Send { buf, peer, tag } => {
                tensors.push(RawTensor::of(buf));
                described.push((sys::DT_P2P_SEND, peer, tag));
            }
            P2pOp::Recv { buf, peer, tag } => {
                tensors.push(RawTensor::of_mut(buf));
                described.push((sys::DT_P2P_RECV, peer, tag));
            }
        }
    }
    (Operands::tensors(tensors, NO_STREAM), described)
}

impl<'p> Comm<'p> {
    /// Runs `ops` as one group: every op is posted before any is waited
    /// for; returns once all are done, or the first error. A bad op
    /// (peer out of range, negative tag) or an empty group refuses the whole
    /// group with [`Status::InvalidArgument`](crate::Status::InvalidArgument)
    /// and starts nothing.
    pub fn p2p_group<T: Element>(&self, ops: Vec<P2pOp<'_, T>>) -> Result<()> {
        let (operands, described) = operands(ops);
        self.run(operands, start::p2p_group(described))
    }

    /// Non-blocking [`p2p_group`](Self::p2p_group): one request for the group.
    pub fn ip2p_group<'a, T: Element>(&'a self, ops: Vec<P2pOp<'a, T>>) -> Result<Request<'a>> {
        let (operands, described) = operands(ops);
        self.launch(operands, start::p2p_group(described))
    }
}
