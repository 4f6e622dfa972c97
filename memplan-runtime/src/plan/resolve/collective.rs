//! One rank's part of a collective resolved: its buffers device memory of
//! its stream's GPU, of one type NCCL knows, the lengths and ranks its
//! kind needs.

use super::*;

impl Resolver<'_> {
    /// One rank's part of a collective, on `stream` of GPU `gpu`: its
    /// buffers device memory of that GPU, of a type NCCL knows, their
    /// lengths as the collective needs, and its root or peer a rank.
    pub(super) fn collective(
        &mut self,
        collective: &CollectiveInfo,
        stream: u16,
        gpu: u16,
    ) -> Result<Step, Fault> {
        let (count, first) = self.ranks.or_malformed()?;
        let rank = first + usize::from(gpu);
        let (send, recv) = (
            self.span(collective.send, Side::Device)?,
            self.span(collective.recv, Side::Device)?,
        );
        for span in [&send, &recv] {
            match span.gpu {
                Some(on) if on == gpu => {}
                Some(_) => return Err(Fault::Unsupported(ANOTHER_GPUS)),
                None => {
                    return Err(Fault::Unsupported(
                        "NCCL reads and writes device memory, and this buffer is host memory",
                    ));
                }
            }
        }
        // A send writes nothing (its one place is its send buffer).
        if !matches!(collective.kind, CollectiveKind::Send(_)) {
            writable(&recv)?;
        }
        self.same_elements(&send, &recv)?;
        let elem = self.info.elem(send.buffer)?;
        let datatype = nccl_datatype(&elem).ok_or(Fault::Unsupported(
            "NCCL reduces i8, u8, i32, u32, i64, u64, f32 and f64, and this buffer holds another type",
        ))?;
        let mut rank_size = |size: u16| self.sizes.get(size);
        let kind = match collective.kind {
            CollectiveKind::AllReduce(op) => Kind::AllReduce(op),
            CollectiveKind::Broadcast(root) => Kind::Broadcast(rank_size(root)?),
            CollectiveKind::AllGather => Kind::AllGather,
            CollectiveKind::ReduceScatter(op) => Kind::ReduceScatter(op),
            CollectiveKind::Send(peer) => Kind::Send(rank_size(peer)?),
            CollectiveKind::Recv(peer) => Kind::Recv(rank_size(peer)?),
        };
        let ((expected, actual), elements) = kind.lengths(send.elements, recv.elements, count);
        if expected != actual {
            return Err(Fault::WrongLength { expected, actual });
        }
        // In place, or apart: NCCL reads the one while it writes the other.
        let in_place = send.addr == recv.addr && send.bytes == recv.bytes;
        let overlapping = overlap(
            (send.addr.offset, send.bytes),
            (recv.addr.offset, recv.bytes),
        );
        if send.buffer == recv.buffer && !in_place && overlapping {
            return Err(Fault::Unsupported(
                "a collective's send and receive ranges overlap without being the same range (in place)",
            ));
        }
        // NCCL's version is a GPU host's, which no device model knows.
        let nccl = match self.against {
            Against::Gpus(_) => Some(crate::nccl::nccl()?),
            Against::Models => None,
        };
        Ok(Step::Collective {
            call: Call {
                kind,
                argument: kind.argument(nccl, count, rank)?,
                send: std::ptr::null_mut(),
                recv: std::ptr::null_mut(),
                elements,
                datatype,
            },
            send: send.addr,
            recv: recv.addr,
            bytes: send.bytes.max(recv.bytes),
            stream,
            comm: gpu,
        })
    }
}

/// NCCL's code for elements of `elem`, if it has one.
fn nccl_datatype(elem: &Elem) -> Option<u32> {
    fn code<T: NcclElement>(elem: &Elem) -> Option<u32> {
        elem.is::<T>().then_some(T::DATATYPE)
    }
    code::<f32>(elem)
        .or_else(|| code::<f64>(elem))
        .or_else(|| code::<i32>(elem))
        .or_else(|| code::<u32>(elem))
        .or_else(|| code::<i64>(elem))
        .or_else(|| code::<u64>(elem))
        .or_else(|| code::<i8>(elem))
        .or_else(|| code::<u8>(elem))
}
