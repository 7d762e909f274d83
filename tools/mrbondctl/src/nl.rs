// SPDX-License-Identifier: GPL-2.0
//! Netlink transport: a neli generic netlink socket bound to the
//! rdma_mrbond family.
//!
//! The family id and the multicast group ids are resolved by neli's
//! [`NlRouter`] (nlctrl's CTRL_CMD_GETFAMILY). Requests are sent with neli's synchronous
//! [`NlSocketHandle`]; the replies are decoded by neli (`Nlmsghdr`,
//! `Nlmsgerr` with its extended-ACK TLVs, `Genlmsghdr`). This module only
//! runs the request/response state machine: match the sequence number,
//! collect payloads, stop at the ACK (do) or NLMSG_DONE (dump), and turn an
//! error into [`KernelError`].

use std::collections::VecDeque;
use std::fmt::Debug;
use std::io::Cursor;
use std::os::fd::AsRawFd;
use std::time::Instant;

use neli::consts::genl::{Cmd as GenlCmd, NlAttrType};
use neli::consts::nl::{NlmF, Nlmsg};
use neli::consts::socket::NlFamily;
use neli::err::{RouterError, SocketError};
use neli::genl::Genlmsghdr;
use neli::nl::{NlPayload, Nlmsghdr, NlmsghdrBuilder};
use neli::router::synchronous::NlRouter;
use neli::socket::synchronous::NlSocketHandle;
use neli::types::{Buffer, GenlBuffer};
use neli::utils::Groups;
use neli::{FromBytesWithInput, TypeSize};

use crate::attrs::{Cmd, FAMILY_NAME};
use crate::error::{Error, KernelError};
use crate::msg::GenlMsg;
use crate::sys;

/// `enum nlmsgerr_attrs` (linux/netlink.h).
const NLMSGERR_ATTR_MSG: u16 = 1;
const NLMSGERR_ATTR_OFFS: u16 = 2;
const NLMSGERR_ATTR_MISS_TYPE: u16 = 5;
const NLMSGERR_ATTR_MISS_NEST: u16 = 6;

/// A socket of neli's router for the family and multicast group lookups
/// (CTRL_CMD_GETFAMILY); requests go through [`Client`]'s own socket,
/// whose replies keep their extended ACKs.
fn resolver() -> Result<NlRouter, Error> {
    NlRouter::connect(NlFamily::Generic, None, Groups::empty())
        .map(|(router, _multicast)| router)
        .map_err(|e| Error::Local(format!("cannot open generic netlink socket: {e}")))
}

/// What one receive for a multicast subscriber produced.
#[derive(Debug)]
pub enum Notification {
    /// A message of the rdma_mrbond family.
    Msg(GenlMsg),
    /// The socket receive queue overflowed (ENOBUFS): events were lost.
    Overrun,
}

/// A generic netlink socket talking to the rdma_mrbond family.
pub struct Client {
    sock: NlSocketHandle,
    family: u16,
    seq: u32,
    pending: VecDeque<GenlMsg>,
    /// Set when a dump reply carried NLM_F_DUMP_INTR.
    pub dump_interrupted: bool,
}

impl Client {
    /// Opens the socket (with extended ACKs) and resolves the family.
    pub fn connect() -> Result<Self, Error> {
        let sock = NlSocketHandle::connect(NlFamily::Generic, None, Groups::empty())
            .map_err(|e| Error::Local(format!("cannot open generic netlink socket: {e}")))?;
        // Extended ACKs exist since Linux 4.12; without them errors still
        // carry the errno, so a failure here is not fatal.
        let _ = sock.enable_ext_ack(true);
        let mut c = Client {
            sock,
            family: 0,
            seq: 0,
            pending: VecDeque::new(),
            dump_interrupted: false,
        };
        c.resolve_family()?;
        Ok(c)
    }

    fn resolve_family(&mut self) -> Result<(), Error> {
        self.family = resolver()?
            .resolve_genl_family(FAMILY_NAME)
            .map_err(|e| match e {
                RouterError::Nlmsgerr(ref m) if -*m.error() == libc::ENOENT => Error::NoFamily,
                e => Error::Local(format!("cannot resolve family {FAMILY_NAME}: {e}")),
            })?;
        Ok(())
    }

    /// Sends a do request (NLM_F_ACK) and returns the replies before the ACK.
    pub fn request(&mut self, msg: GenlMsg) -> Result<Vec<GenlMsg>, Error> {
        self.transact(self.family, msg, NlmF::ACK)
    }

    /// Sends a dump request and returns every reply up to NLMSG_DONE.
    pub fn dump(&mut self, msg: GenlMsg) -> Result<Vec<GenlMsg>, Error> {
        self.transact(self.family, msg, NlmF::DUMP)
    }

    /// Joins a multicast group of the family, by name.
    pub fn subscribe(&mut self, group: &str) -> Result<(), Error> {
        let id = resolver()?
            .resolve_nl_mcast_group(FAMILY_NAME, group)
            .map_err(|_| Error::NoMcastGroup(group.to_string()))?;
        self.sock
            .add_mcast_membership(Groups::new_groups(&[id]))
            .map_err(|e| Error::Local(format!("cannot join multicast group {group}: {e}")))
    }

    /// Waits for the next message of the family (until `deadline`, if any).
    /// `Ok(None)` means the deadline passed.
    pub fn next_notification(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<Notification>, Error> {
        loop {
            if let Some(m) = self.pending.pop_front() {
                return Ok(Some(Notification::Msg(m)));
            }
            let timeout = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Ok(None),
                },
                None => None,
            };
            let readable = sys::wait_readable(self.sock.as_raw_fd(), timeout)
                .map_err(|e| Error::Local(format!("poll: {e}")))?;
            if !readable {
                continue;
            }
            let (iter, _groups) = match self.sock.recv::<u16, Buffer>() {
                Ok(r) => r,
                Err(SocketError::Io(e)) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                    return Ok(Some(Notification::Overrun));
                }
                Err(e) => return Err(Error::Local(format!("receive: {e}"))),
            };
            for m in iter {
                let m = m.map_err(|e| Error::Local(format!("malformed notification: {e}")))?;
                if *m.nl_type() != self.family {
                    continue;
                }
                if let NlPayload::Payload(p) = m.nl_payload() {
                    self.pending.push_back(decode_genl::<Cmd, _>(p)?);
                }
            }
        }
    }

    /// Sends one request and collects its replies.
    fn transact<C, T>(
        &mut self,
        nl_type: u16,
        msg: Genlmsghdr<C, T>,
        flags: NlmF,
    ) -> Result<Vec<Genlmsghdr<C, T>>, Error>
    where
        C: GenlCmd + TypeSize + Debug,
        T: NlAttrType + Debug,
    {
        // Sequence 0 is what notifications carry; never use it.
        self.seq = self.seq.wrapping_add(1).max(1);
        let seq = self.seq;
        let req = build_request(nl_type, flags, seq, self.sock.pid(), msg)?;
        self.sock
            .send(&req)
            .map_err(|e| Error::Local(format!("send: {e}")))?;

        let mut replies = Vec::new();
        loop {
            let (iter, _groups) = self
                .sock
                .recv::<u16, Buffer>()
                .map_err(|e| Error::Local(format!("receive: {e}")))?;
            for m in iter {
                let m = m.map_err(|e| Error::Local(format!("malformed reply: {e}")))?;
                if *m.nl_seq() != seq {
                    // Not ours (e.g. a notification): skip.
                    continue;
                }
                if m.nl_flags().contains(NlmF::DUMP_INTR) {
                    self.dump_interrupted = true;
                }
                match classify(&m)? {
                    Step::Reply(p) => replies.push(decode_genl(p)?),
                    // Stop here: an ACK may carry extack TLVs that neli
                    // leaves unread, so nothing after it is parsed.
                    Step::Done => return Ok(replies),
                    Step::Skip => {}
                }
            }
        }
    }
}

/// What one received message means for the request in flight.
#[derive(Debug)]
enum Step<'a> {
    /// A reply payload (genlmsghdr + attributes).
    Reply(&'a Buffer),
    /// The ACK of a do request, or NLMSG_DONE of a dump.
    Done,
    /// NLMSG_NOOP and the like.
    Skip,
}

/// Classifies a received message; kernel errors become [`Error::Kernel`].
fn classify(m: &Nlmsghdr<u16, Buffer>) -> Result<Step<'_>, Error> {
    match m.nl_payload() {
        NlPayload::Ack(_) => Ok(Step::Done),
        NlPayload::Err(e) => Err(Error::Kernel(kernel_error(*e.error(), e.ext_ack()))),
        NlPayload::DumpExtAck(e) if *e.error() < 0 => {
            Err(Error::Kernel(kernel_error(*e.error(), e.ext_ack())))
        }
        NlPayload::DumpExtAck(_) => Ok(Step::Done),
        _ if *m.nl_type() == u16::from(Nlmsg::Done) => Ok(Step::Done),
        NlPayload::Payload(p) => Ok(Step::Reply(p)),
        NlPayload::Empty => Ok(Step::Skip),
    }
}

/// Builds the netlink message for a request (also used by the tests).
pub fn build_request<C, T>(
    nl_type: u16,
    flags: NlmF,
    seq: u32,
    pid: u32,
    msg: Genlmsghdr<C, T>,
) -> Result<Nlmsghdr<u16, Genlmsghdr<C, T>>, Error>
where
    C: GenlCmd + TypeSize,
    T: NlAttrType,
{
    NlmsghdrBuilder::default()
        .nl_type(nl_type)
        .nl_flags(flags | NlmF::REQUEST)
        .nl_seq(seq)
        .nl_pid(pid)
        .nl_payload(NlPayload::Payload(msg))
        .build()
        .map_err(Error::local)
}

/// Decodes a payload buffer as genlmsghdr + attributes.
pub fn decode_genl<C, T>(p: &Buffer) -> Result<Genlmsghdr<C, T>, Error>
where
    C: GenlCmd + TypeSize,
    T: NlAttrType,
{
    Genlmsghdr::from_bytes_with_input(&mut Cursor::new(p.as_ref()), p.len())
        .map_err(|e| Error::Local(format!("malformed generic netlink message: {e}")))
}

/// Turns `nlmsgerr.error` and its extended-ACK TLVs into a [`KernelError`].
pub fn kernel_error<A>(error: i32, ext_ack: &GenlBuffer<A, Buffer>) -> KernelError
where
    A: NlAttrType,
{
    let mut k = KernelError {
        errno: error.saturating_neg(),
        ..KernelError::default()
    };
    let u32_of = |p: &[u8]| <[u8; 4]>::try_from(p).ok().map(u32::from_ne_bytes);
    for a in ext_ack.iter() {
        let p = a.nla_payload().as_ref();
        // Strip NLA_F_NESTED / NLA_F_NET_BYTEORDER.
        match u16::from(a.nla_type()) & 0x3fff {
            NLMSGERR_ATTR_MSG => {
                let end = p.iter().position(|&b| b == 0).unwrap_or(p.len());
                let s = String::from_utf8_lossy(&p[..end]).into_owned();
                if !s.is_empty() {
                    k.msg = Some(s);
                }
            }
            NLMSGERR_ATTR_OFFS => k.offset = u32_of(p),
            NLMSGERR_ATTR_MISS_TYPE => k.miss_type = u32_of(p).and_then(|v| u16::try_from(v).ok()),
            NLMSGERR_ATTR_MISS_NEST => k.miss_nest = u32_of(p),
            _ => {}
        }
    }
    k
}

#[cfg(test)]
mod tests {
    use neli::genl::{AttrTypeBuilder, NlattrBuilder};
    use neli::ToBytes;

    use super::*;
    use crate::msg;

    fn nlmsg_bytes<P: neli::Size + neli::ToBytes>(m: &Nlmsghdr<u16, P>) -> Vec<u8> {
        let mut c = Cursor::new(Vec::new());
        m.to_bytes(&mut c).expect("serialises");
        c.into_inner()
    }

    fn parse_one(bytes: &[u8]) -> Nlmsghdr<u16, Buffer> {
        use neli::FromBytes;
        Nlmsghdr::<u16, Buffer>::from_bytes(&mut Cursor::new(bytes)).expect("parses")
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn bond_del_full_message() {
        let m = build_request(
            0x1f,
            NlmF::ACK,
            9,
            0,
            msg::bond_del("mrbond0").expect("builds"),
        )
        .expect("builds");
        #[rustfmt::skip]
        let expected: Vec<u8> = vec![
            // nlmsghdr: len 32, type 0x1f, flags REQUEST|ACK, seq 9, pid 0
            32, 0, 0, 0, 0x1f, 0, 0x05, 0, 9, 0, 0, 0, 0, 0, 0, 0,
            // genlmsghdr: BOND_DEL, version 1
            3, 1, 0, 0,
            // NAME
            12, 0, 2, 0, b'm', b'r', b'b', b'o', b'n', b'd', b'0', 0,
        ];
        assert_eq!(nlmsg_bytes(&m), expected);
    }

    /// An NLMSG_ERROR as the kernel sends it with extended ACKs enabled:
    /// errno, the echoed request, then MSG and OFFS TLVs.
    #[cfg(target_endian = "little")]
    #[test]
    fn error_with_extack_is_decoded() {
        let req = build_request(
            0x1f,
            NlmF::ACK,
            4,
            77,
            msg::bond_set("mrbond0", crate::attrs::Policy::Rr).expect("builds"),
        )
        .expect("builds");
        let echoed = nlmsg_bytes(&req);
        let text = b"weight out of range\0";
        let mut tlvs = Vec::new();
        tlvs.extend_from_slice(&((4 + text.len()) as u16).to_ne_bytes());
        tlvs.extend_from_slice(&NLMSGERR_ATTR_MSG.to_ne_bytes());
        tlvs.extend_from_slice(text);
        while tlvs.len() % 4 != 0 {
            tlvs.push(0);
        }
        tlvs.extend_from_slice(&[8, 0, 2, 0, 36, 0, 0, 0]);

        let len = 16 + 4 + echoed.len() + tlvs.len();
        let mut v = Vec::new();
        v.extend_from_slice(&(len as u32).to_ne_bytes());
        v.extend_from_slice(&2u16.to_ne_bytes()); // NLMSG_ERROR
        v.extend_from_slice(&0x200u16.to_ne_bytes()); // NLM_F_ACK_TLVS
        v.extend_from_slice(&4u32.to_ne_bytes());
        v.extend_from_slice(&77u32.to_ne_bytes());
        v.extend_from_slice(&(-libc::ERANGE).to_ne_bytes());
        v.extend_from_slice(&echoed);
        v.extend_from_slice(&tlvs);

        let m = parse_one(&v);
        match classify(&m) {
            Err(Error::Kernel(k)) => {
                assert_eq!(k.errno, libc::ERANGE);
                assert_eq!(k.msg.as_deref(), Some("weight out of range"));
                assert_eq!(k.offset, Some(36));
                assert_eq!(
                    Error::Kernel(k).to_string(),
                    "Numerical result out of range: weight out of range"
                );
            }
            other => panic!("expected a kernel error, got {other:?}"),
        }
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn ack_and_done_end_the_request() {
        // ACK: error 0 + capped request header.
        let mut ack = vec![36, 0, 0, 0, 2, 0, 0x00, 0x01, 4, 0, 0, 0, 77, 0, 0, 0];
        ack.extend_from_slice(&0i32.to_ne_bytes());
        ack.extend_from_slice(&[32, 0, 0, 0, 0x1f, 0, 5, 0, 4, 0, 0, 0, 77, 0, 0, 0]);
        assert!(matches!(classify(&parse_one(&ack)), Ok(Step::Done)));

        // NLMSG_DONE of a dump (NLM_F_MULTI), status 0.
        let mut done = vec![20, 0, 0, 0, 3, 0, 0x02, 0, 4, 0, 0, 0, 77, 0, 0, 0];
        done.extend_from_slice(&0i32.to_ne_bytes());
        assert!(matches!(classify(&parse_one(&done)), Ok(Step::Done)));

        // NLMSG_DONE carrying a dump error.
        let mut failed = vec![20, 0, 0, 0, 3, 0, 0x02, 0, 4, 0, 0, 0, 77, 0, 0, 0];
        failed.extend_from_slice(&(-libc::EPERM).to_ne_bytes());
        match classify(&parse_one(&failed)) {
            Err(Error::Kernel(k)) => assert_eq!(k.errno, libc::EPERM),
            other => panic!("expected a kernel error, got {other:?}"),
        }
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn reply_payload_is_decoded() {
        let body = msg::tests::canned_bond_get_reply();
        let mut v = Vec::new();
        v.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
        v.extend_from_slice(&0x1fu16.to_ne_bytes());
        v.extend_from_slice(&0u16.to_ne_bytes());
        v.extend_from_slice(&4u32.to_ne_bytes());
        v.extend_from_slice(&77u32.to_ne_bytes());
        v.extend_from_slice(&body);
        let m = parse_one(&v);
        let Ok(Step::Reply(p)) = classify(&m) else {
            panic!("expected a reply");
        };
        let g: GenlMsg = decode_genl(p).expect("decodes");
        assert_eq!(*g.cmd(), Cmd::BondGet);
        assert_eq!(
            msg::parse_bond(&g).expect("bond"),
            msg::tests::canned_bond()
        );
    }

    #[test]
    fn missing_attribute_extack() {
        let mut ext: GenlBuffer<u16, Buffer> = GenlBuffer::new();
        for (ty, val) in [
            (NLMSGERR_ATTR_MISS_TYPE, 1u32),
            (NLMSGERR_ATTR_MISS_NEST, 20),
        ] {
            let t = AttrTypeBuilder::default()
                .nla_type(ty)
                .build()
                .expect("type");
            ext.push(
                NlattrBuilder::default()
                    .nla_type(t)
                    .nla_payload(val)
                    .build()
                    .expect("attr"),
            );
        }
        let k = kernel_error(-libc::EINVAL, &ext);
        assert_eq!(k.miss_type, Some(1));
        assert_eq!(k.miss_nest, Some(20));
        assert_eq!(
            k.to_string(),
            "Invalid argument: missing attribute member.ibdev"
        );
    }
}
