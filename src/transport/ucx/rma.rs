//! One-sided access to a peer's memory through UCX, for the rendezvous of big messages: the
//! owner exposes a buffer (`expose`: registered with UCX, described by a packed remote key it
//! sends to the peer in a packet), and the peer reads (`get`) or writes (`put`) it. On networks
//! with RDMA this is zero-copy; over TCP, UCX emulates it with messages that the owner's progress
//! serves, so the owner must keep progressing until the peer tells it the access is over.
use super::{check, status_ptr, status_text, sys, StatusPtr, Worker};
use std::collections::HashMap;
use std::ffi::c_void;

/// What a worker keeps for RMA: its exposed regions and its accesses in flight.
#[derive(Default)]
pub(super) struct Rma {
    regions: HashMap<u64, sys::ucp_mem_h>,
    next_region: u64,
    next_access: u64,
    /// Accesses UCX has not completed: id, request, the unpacked remote key they use (none
    /// for a flush).
    accesses: Vec<(u64, *mut c_void, Option<sys::ucp_rkey_h>)>,
    /// Completed accesses not yet asked about by `access_done`, with their outcome.
    finished: HashMap<u64, sys::ucs_status_t>,
}

impl Worker {
    /// Exposes `len` bytes at `addr` to peers: returns the region's id (for `unexpose`) and its
    /// packed remote key, which a peer needs to reach it.
    ///
    /// # Safety
    /// `addr..addr+len` must stay mapped until `unexpose` (or the worker's end), and peers
    /// holding the key may read and write it meanwhile.
    pub unsafe fn expose(&mut self, addr: *mut u8, len: usize) -> Result<(u64, Vec<u8>), String> {
        // SAFETY: all-zero ucp_mem_map_params_t is "no field set"; the fields used are flagged.
        let mut params: sys::ucp_mem_map_params_t = unsafe { std::mem::zeroed() };
        params.field_mask = (sys::UCP_MEM_MAP_PARAM_FIELD_ADDRESS | sys::UCP_MEM_MAP_PARAM_FIELD_LENGTH) as u64;
        params.address = addr as *mut c_void;
        params.length = len.max(1);
        let mut memh: sys::ucp_mem_h = std::ptr::null_mut();
        // SAFETY: the worker's live context; UCX registers the caller's memory (not allocating,
        // as no ALLOCATE flag is given), which the caller keeps mapped until `unexpose`.
        check(self.lib, unsafe { self.lib.ucp_mem_map(self._ctx.h, &params, &mut memh) }, "mem_map")?;
        let mut buf: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: a region of this context; UCX allocates the packed key.
        if let Err(e) = check(self.lib, unsafe { self.lib.ucp_rkey_pack(self._ctx.h, memh, &mut buf, &mut size) }, "rkey_pack") {
            // SAFETY: mapped just above, unmapped once.
            unsafe { self.lib.ucp_mem_unmap(self._ctx.h, memh) };
            return Err(e);
        }
        // SAFETY: UCX wrote `size` bytes at `buf`, released right after the copy.
        let rkey = unsafe { std::slice::from_raw_parts(buf as *const u8, size) }.to_vec();
        // SAFETY: `buf` came from ucp_rkey_pack.
        unsafe { self.lib.ucp_rkey_buffer_release(buf) };
        let id = self.rma.next_region;
        self.rma.next_region += 1;
        self.rma.regions.insert(id, memh);
        Ok((id, rkey))
    }

    /// Ends the exposure of region `id` (after the peer said it is done with it).
    pub fn unexpose(&mut self, id: u64) {
        if let Some(memh) = self.rma.regions.remove(&id) {
            // SAFETY: a region of this worker's context, unmapped once.
            unsafe { self.lib.ucp_mem_unmap(self._ctx.h, memh) };
        }
    }

    /// Starts reading `len` bytes at `remote` in `peer`'s region (described by `rkey`) into
    /// `dst`; returns the access's id for `access_done`.
    ///
    /// # Safety
    /// `dst` must stay valid for `len` bytes, and untouched, until `access_done` says true.
    pub unsafe fn get(&mut self, peer: usize, rkey: &[u8], remote: u64, dst: *mut u8, len: usize) -> Result<u64, String> {
        self.access(peer, rkey, true, remote, dst, len)
    }

    /// Starts writing `len` bytes from `src` to `remote` in `peer`'s region (described by `rkey`).
    ///
    /// # Safety
    /// `src` must stay valid for `len` bytes, and unmodified, until `access_done` says true.
    pub unsafe fn put(&mut self, peer: usize, rkey: &[u8], remote: u64, src: *const u8, len: usize) -> Result<u64, String> {
        self.access(peer, rkey, false, remote, src as *mut u8, len)
    }

    fn access(&mut self, peer: usize, rkey: &[u8], read: bool, remote: u64, local: *mut u8, len: usize) -> Result<u64, String> {
        let ep = self.endpoint(peer)?;
        let mut rk: sys::ucp_rkey_h = std::ptr::null_mut();
        // SAFETY: a live endpoint; `rkey` is a packed key (UCX validates what it parses).
        check(self.lib, unsafe { self.lib.ucp_ep_rkey_unpack(ep, rkey.as_ptr() as *const c_void, &mut rk) }, &format!("unpacking peer {peer}'s remote key"))?;
        // SAFETY: all-zero is "no attribute set": contiguous bytes, completion polled.
        let param: sys::ucp_request_param_t = unsafe { std::mem::zeroed() };
        // SAFETY: live endpoint and key; `local` has `len` bytes, valid until completion (the
        // caller's contract on `get` / `put`).
        let p = unsafe {
            if read {
                self.lib.ucp_get_nbx(ep, local as *mut c_void, len, remote, rk, &param)
            } else {
                self.lib.ucp_put_nbx(ep, local as *const c_void, len, remote, rk, &param)
            }
        };
        let id = self.rma.next_access;
        self.rma.next_access += 1;
        match status_ptr(p) {
            StatusPtr::Request(req) => self.rma.accesses.push((id, req, Some(rk))),
            done => {
                // SAFETY: no request uses the key any more; destroyed once.
                unsafe { self.lib.ucp_rkey_destroy(rk) };
                let s = if let StatusPtr::Failed(s) = done { s } else { sys::UCS_OK };
                self.rma.finished.insert(id, s);
            }
        }
        Ok(id)
    }

    /// Starts a flush of every access to `peer`: when it completes (`access_done`), the puts
    /// before it are visible in the peer's memory.
    pub fn flush(&mut self, peer: usize) -> Result<u64, String> {
        let ep = self.endpoint(peer)?;
        // SAFETY: all-zero is "no attribute set".
        let param: sys::ucp_request_param_t = unsafe { std::mem::zeroed() };
        // SAFETY: a live endpoint of this worker.
        let p = unsafe { self.lib.ucp_ep_flush_nbx(ep, &param) };
        let id = self.rma.next_access;
        self.rma.next_access += 1;
        match status_ptr(p) {
            StatusPtr::Request(req) => self.rma.accesses.push((id, req, None)),
            StatusPtr::Done => {
                self.rma.finished.insert(id, sys::UCS_OK);
            }
            StatusPtr::Failed(s) => {
                self.rma.finished.insert(id, s);
            }
        }
        Ok(id)
    }

    /// Whether access `id` completed (progress first); `Err` if it failed. Ids not asked about
    /// again after true.
    pub fn access_done(&mut self, id: u64) -> Result<bool, String> {
        self.reap_accesses();
        match self.rma.finished.remove(&id) {
            None => Ok(false),
            Some(sys::UCS_OK) => Ok(true),
            Some(s) => Err(format!("UCX remote memory access failed: {}", status_text(self.lib, s))),
        }
    }

    /// Frees the completed accesses' requests and keys, recording their outcome.
    #[inline]
    pub(super) fn reap_accesses(&mut self) {
        // An empty `retain` is still a call and a pass: a waiter's every look comes here.
        if self.rma.accesses.is_empty() {
            return;
        }
        let lib = self.lib;
        let finished = &mut self.rma.finished;
        self.rma.accesses.retain(|&(id, req, rk)| {
            // SAFETY: an unfreed request of this worker.
            let s = unsafe { lib.ucp_request_check_status(req) };
            if s == sys::UCS_INPROGRESS {
                return true;
            }
            // SAFETY: completed: request freed once, then the key it used.
            unsafe {
                lib.ucp_request_free(req);
                if let Some(rk) = rk {
                    lib.ucp_rkey_destroy(rk);
                }
            }
            finished.insert(id, s);
            false
        });
    }

    /// Drops every access and region (the worker is going away).
    pub(super) fn drop_rma(&mut self) {
        for (_, req, rk) in std::mem::take(&mut self.rma.accesses) {
            // SAFETY: unfreed requests and keys of this worker, each released once.
            unsafe {
                self.lib.ucp_request_cancel(self.h, req);
                self.lib.ucp_request_free(req);
                if let Some(rk) = rk {
                    self.lib.ucp_rkey_destroy(rk);
                }
            }
        }
        for (_, memh) in std::mem::take(&mut self.rma.regions) {
            // SAFETY: regions of this worker's context, unmapped once.
            unsafe { self.lib.ucp_mem_unmap(self._ctx.h, memh) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::pair;

    /// `b` reads 4 MiB out of `a`'s exposed buffer and writes 1 MiB into it, over `tls`.
    fn get_and_put(tls: &str) {
        let (mut a, mut b) = pair(tls);
        let mut exposed: Vec<u8> = (0..4usize << 20).map(|i| (i * 13 + 5) as u8).collect();
        // SAFETY: `exposed` lives past `unexpose` below.
        let (region, rkey) = unsafe { a.expose(exposed.as_mut_ptr(), exposed.len()) }.unwrap();
        let mut into = vec![0u8; exposed.len()];
        let base = exposed.as_ptr() as u64;
        // SAFETY: `into` and `from` outlive the accesses (waited for below).
        let got = unsafe { b.get(0, &rkey, base, into.as_mut_ptr(), into.len()) }.unwrap();
        let from = vec![0xabu8; 1 << 20];
        // SAFETY: as above.
        let put = unsafe { b.put(0, &rkey, base + 1000, from.as_ptr(), from.len()) }.unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let (mut got_done, mut put_done) = (false, false);
        while !(got_done && put_done) {
            assert!(std::time::Instant::now() < deadline, "UCX ({tls}) RMA did not complete");
            a.progress().unwrap();
            b.progress().unwrap();
            got_done = got_done || b.access_done(got).unwrap();
            put_done = put_done || b.access_done(put).unwrap();
        }
        // A put completes at its origin when its source may be reused; a flush makes it visible.
        let flush = b.flush(0).unwrap();
        while !b.access_done(flush).unwrap() {
            assert!(std::time::Instant::now() < deadline, "UCX ({tls}) flush did not complete");
            a.progress().unwrap();
            b.progress().unwrap();
        }
        // The get may have read before or after the put landed: check the bytes outside it,
        // then the put's range in `a`'s buffer.
        let want: Vec<u8> = (0..4usize << 20).map(|i| (i * 13 + 5) as u8).collect();
        assert!(into[..1000] == want[..1000] && into[1000 + (1 << 20)..] == want[1000 + (1 << 20)..], "get ({tls})");
        assert!(exposed[1000..1000 + (1 << 20)].iter().all(|&x| x == 0xab), "put ({tls})");
        assert!(exposed[..1000] == want[..1000], "put wrote outside its range ({tls})");
        a.unexpose(region);
    }

    #[test]
    fn a_peer_reads_and_writes_an_exposed_buffer_over_tcp() {
        get_and_put("tcp");
    }

    #[test]
    fn a_peer_reads_and_writes_an_exposed_buffer_over_what_ucx_picks() {
        get_and_put("all");
    }
}
