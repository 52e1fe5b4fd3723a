//! The messages of RMA between nodes (`super::remote` sends them, `super::serve` answers): a
//! request names the operation, the target bytes as (offset, length) blocks from a window
//! offset, and carries the origin's packed data; the reply carries a status and the data read.
//! They travel as point-to-point messages on the window's private communicator (its
//! point-to-point context, which nothing else uses): requests with `TAG_REQ`, PSCW notices with
//! `TAG_POST`/`TAG_DONE`, each reply with the tag its origin chose (from `REPLY_BASE` up).
use crate::error::{err, ErrorClass, MpiError, MpiResult};

pub const TAG_REQ: i32 = 0;
pub const TAG_POST: i32 = 1;
pub const TAG_DONE: i32 = 2;
pub const REPLY_BASE: i32 = 16;

/// What a request asks of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Put = 1,
    Get,
    /// Accumulate or Get_accumulate (`fetch`): read, combine, write under the accumulate mutex.
    Acc,
    /// Compare_and_swap: the data is the origin value, then the compare value.
    Cas,
    Lock,
    Unlock,
}

const KINDS: [Kind; 6] = [Kind::Put, Kind::Get, Kind::Acc, Kind::Cas, Kind::Lock, Kind::Unlock];
const FIXED: usize = 40;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub kind: u8,
    /// Acc: the `crate::op::Op` and `crate::datatype::basic::Basic` of the reduction.
    pub op: u8,
    pub basic: u8,
    /// Lock: exclusive. Acc: return the old contents.
    pub flag: bool,
    pub reply_tag: i32,
    /// Window offset in bytes of the target's memory (an address for a dynamic window).
    pub addr: u64,
    /// Acc: elements of the reduction.
    pub n: u64,
    /// Acc of a pair type with a gap: the kernels' (padded) element size, and the element's
    /// blocks (offset in the padded element, length) in stream order.
    pub elem_extent: u64,
    pub elem: Vec<(u64, u64)>,
    /// The target bytes: (offset from `addr`, two's complement, length) in stream order.
    pub blocks: Vec<(u64, u64)>,
    pub data: Vec<u8>,
}

impl Request {
    pub fn kind(&self) -> Option<Kind> {
        KINDS.iter().copied().find(|&k| k as u8 == self.kind)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(FIXED + 16 * (self.blocks.len() + self.elem.len()) + self.data.len());
        v.extend_from_slice(&[self.kind, self.op, self.basic, self.flag as u8]);
        v.extend_from_slice(&self.reply_tag.to_le_bytes());
        for x in [self.addr, self.n, self.elem_extent] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.extend_from_slice(&(self.blocks.len() as u32).to_le_bytes());
        v.extend_from_slice(&(self.elem.len() as u32).to_le_bytes());
        for &(a, b) in self.blocks.iter().chain(&self.elem) {
            v.extend_from_slice(&a.to_le_bytes());
            v.extend_from_slice(&b.to_le_bytes());
        }
        v.extend_from_slice(&self.data);
        v
    }

    /// None for bytes that are not a request (never from oxmpi).
    pub fn decode(b: &[u8]) -> Option<Request> {
        let u64_at = |i: usize| b.get(i..i + 8).map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")));
        let u32_at = |i: usize| b.get(i..i + 4).map(|s| u32::from_le_bytes(s.try_into().expect("4 bytes")));
        let head = b.get(..4)?;
        let (nb, ne) = (u32_at(32)? as usize, u32_at(36)? as usize);
        let pairs = |from: usize, k: usize| (0..k).map(|i| Some((u64_at(from + 16 * i)?, u64_at(from + 16 * i + 8)?))).collect::<Option<Vec<_>>>();
        let blocks = pairs(FIXED, nb)?;
        let elem = pairs(FIXED + 16 * nb, ne)?;
        let data = b.get(FIXED + 16 * (nb + ne)..)?.to_vec();
        Some(Request { kind: head[0], op: head[1], basic: head[2], flag: head[3] != 0, reply_tag: u32_at(4)? as i32, addr: u64_at(8)?, n: u64_at(16)?, elem_extent: u64_at(24)?, elem, blocks, data })
    }
}

/// A reply: 0 and the data, or 1, the error class (`ErrorClass::wire`) and its message.
pub fn ok(data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + data.len());
    v.push(0);
    v.extend_from_slice(data);
    v
}

/// Room for an error's message in a reply.
pub const ERROR_ROOM: usize = 9 + 512;

pub fn failed(e: &MpiError) -> Vec<u8> {
    let mut v = vec![1];
    v.extend_from_slice(&e.class.wire().to_le_bytes());
    let msg = e.msg.as_bytes();
    v.extend_from_slice(&msg[..msg.len().min(ERROR_ROOM - 9)]);
    v
}

/// The data of a reply, or its error (`who` names the target in the message).
pub fn result(mut reply: Vec<u8>, who: &str) -> MpiResult<Vec<u8>> {
    match reply.first() {
        Some(0) => {
            reply.remove(0);
            Ok(reply)
        }
        Some(1) if reply.len() >= 9 => {
            let class = ErrorClass::from_wire(i64::from_le_bytes(reply[1..9].try_into().expect("8 bytes")));
            Err(err(class, format!("{who}: {}", String::from_utf8_lossy(&reply[9..]))))
        }
        _ => Err(err(ErrorClass::Intern, format!("{who}: a malformed RMA reply"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_round_trip() {
        let r = Request { kind: Kind::Acc as u8, op: 3, basic: 7, flag: true, reply_tag: 99, addr: 1 << 40, n: 5, elem_extent: 16, elem: vec![(0, 8), (8, 4)], blocks: vec![(u64::MAX - 7, 8), (64, 32)], data: vec![1, 2, 3] };
        let back = Request::decode(&r.encode()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.kind(), Some(Kind::Acc));
        assert!(Request::decode(&r.encode()[..30]).is_none());
        assert_eq!(result(ok(&[4, 5]), "t").unwrap(), vec![4, 5]);
        let e = result(failed(&err(ErrorClass::RmaRange, "outside")), "target 1").unwrap_err();
        assert_eq!(e.class, ErrorClass::RmaRange);
        assert!(e.msg.contains("outside") && e.msg.contains("target 1"), "{}", e.msg);
    }
}
