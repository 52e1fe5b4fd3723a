//! The packet every transport carries between the point-to-point engines of two ranks: a
//! 64-byte header and a payload. The header's fields serve the protocols of `p2p::engine`
//! (eager, rendezvous, streaming, split copies, acknowledgements, revocations); a transport
//! moves packets without looking into them, except for `kind` (never 0, which the ring uses as
//! its empty marker) and the eager payloads small enough to ride inside the header.

/// What a slot carries. Values are stable: they cross process boundaries.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole message whose payload fits in this slot.
    Eager = 1,
    /// Ready-to-send of a large message: `addr` is the sender's buffer, `total` its length.
    Rts = 2,
    /// Clear-to-send: the receiver could not read the sender's memory; stream it to `rreq`.
    Cts = 3,
    /// A fragment of a streamed message for receive request `rreq`, at `offset`.
    Data = 4,
    /// The receiver finished reading a rendezvous message; send request `sreq` is complete.
    Fin = 5,
    /// A synchronous-mode eager message was matched; send request `sreq` is complete.
    SyncAck = 6,
    /// Receiver to a blocked sender of a large message: write `len` bytes of your buffer, from
    /// `offset`, into my memory at `addr` (process_vm_writev), then answer SplitDone for `rreq`.
    /// Both sides then copy half the message at once.
    Split = 7,
    /// The sender wrote its part of a split copy for receive request `rreq` (`FLAG_FAILED`: it
    /// could not, the receiver copies that part itself).
    SplitDone = 8,
    /// MPIX_Comm_revoke: the communicator of context pair `context` is revoked (see `crate::ulfm`).
    Revoke = 9,
    /// Made by the receiver's own transport, never sent: the payload of an off-node Rts was
    /// pulled into receive request `rreq` (`Transport::pull`; `FLAG_FAILED`: it could not be);
    /// the receiver owes the sender the Fin for `sreq`.
    Pulled = 10,
}

/// Header at the start of every slot; 64 bytes so the payload starts cache-line aligned.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SlotHeader {
    /// A `Kind` value; in the ring also the slot's full/empty marker (0 = empty), written last by
    /// the producer and cleared by the consumer.
    pub kind: u32,
    /// MPI tag of the message (Eager, Rts).
    pub tag: i32,
    /// Communicator context id the message belongs to (Eager, Rts).
    pub context: u32,
    /// Bit flags: `FLAG_SYNC` asks for a SyncAck (Eager) or marks a synchronous send.
    pub flags: u32,
    /// Payload bytes in this slot (Eager, Data).
    pub len: u64,
    /// Total message length in bytes (Eager, Rts, Data).
    pub total: u64,
    /// Sender's request id (Eager with FLAG_SYNC, Rts, Cts, Fin, SyncAck).
    pub sreq: u64,
    /// Receiver's request id (Cts, Data).
    pub rreq: u64,
    /// Sender's buffer address in its own address space (Rts).
    pub addr: u64,
    /// Offset of this fragment in the message (Data).
    pub offset: u64,
}
const _: () = assert!(std::mem::size_of::<SlotHeader>() == 64);

pub const FLAG_SYNC: u32 = 1;
/// Eager payloads up to this size are stored in the header's `rreq`/`addr`/`offset` bytes.
pub const INLINE_MAX: usize = 24;
/// Where an inline payload starts in the header.
pub const INLINE_OFFSET: usize = std::mem::offset_of!(SlotHeader, rreq);
const _: () = assert!(INLINE_OFFSET + INLINE_MAX == std::mem::size_of::<SlotHeader>());

/// On an Rts: the sender is blocked waiting for this send, so it can take half of the copy.
pub const FLAG_BLOCKING: u32 = 2;
/// On a SplitDone: the sender's part of the copy failed.
pub const FLAG_FAILED: u32 = 4;
/// On an Rts: the sender's buffer is typed (non-contiguous) and `addr` is its base address. In
/// threads mode `rreq` is the address of the sender's `TypeRepr` and `len` the element count; in
/// processes mode `rreq` is the address of the type's compact block list (a (stride, reps) header,
/// then one tile's blocks: `datatype::blocks::Blocks::wire`), `len` its number of entries and `offset` the type's extent (the count is `total` over the type's size). The sender's
/// request keeps the type alive until the receiver's Fin.
pub const FLAG_TYPED: u32 = 8;
/// On a typed Rts in processes mode: the sender's type is made of short pieces, which the receiver
/// can only read through a bounce buffer (gaps included); a contiguous receiver rather asks a blocked
/// sender to write the message itself, for which the pieces are cheap local iovecs.
pub const FLAG_SHORT_PIECES: u32 = 16;

