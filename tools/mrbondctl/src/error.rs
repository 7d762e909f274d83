// SPDX-License-Identifier: GPL-2.0
//! Error type of mrbondctl: kernel rejections (errno + extack) and local failures.

use std::fmt;
use std::io;

use crate::attrs;
use crate::sys;

/// A request the kernel answered with a negative errno.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelError {
    /// Positive errno.
    pub errno: i32,
    /// `NLMSGERR_ATTR_MSG`: the extack text the kernel attached.
    pub msg: Option<String>,
    /// `NLMSGERR_ATTR_OFFS`: byte offset of the offending attribute in the request.
    pub offset: Option<u32>,
    /// `NLMSGERR_ATTR_MISS_TYPE`: number of a required attribute that was missing.
    pub miss_type: Option<u16>,
    /// `NLMSGERR_ATTR_MISS_NEST`: offset of the nest the missing attribute belongs to.
    pub miss_nest: Option<u32>,
}

impl KernelError {
    /// `strerror(errno)`.
    pub fn strerror(&self) -> String {
        sys::strerror(self.errno)
    }

    /// Spec name of the missing attribute, if the kernel reported one.
    ///
    /// Requests carry bond attributes at the top level and member attributes
    /// in the only nest, so a `miss_nest` means a member attribute.
    pub fn missing_attr(&self) -> Option<String> {
        let nr = self.miss_type?;
        let name = if self.miss_nest.is_some() {
            attrs::member_attr_name(nr).map(|n| format!("member.{n}"))
        } else {
            attrs::bond_attr_name(nr).map(str::to_string)
        };
        Some(name.unwrap_or_else(|| format!("#{nr}")))
    }

    /// The text after `strerror`: the extack message, else what else the
    /// kernel said.
    pub fn detail(&self) -> Option<String> {
        if let Some(msg) = &self.msg {
            return Some(msg.clone());
        }
        self.missing_attr()
            .map(|a| format!("missing attribute {a}"))
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detail() {
            Some(d) => write!(f, "{}: {d}", self.strerror()),
            None => f.write_str(&self.strerror()),
        }
    }
}

/// Everything that makes mrbondctl exit non-zero after argument parsing.
#[derive(Debug)]
pub enum Error {
    /// The kernel rejected a request.
    Kernel(KernelError),
    /// nlctrl does not know the family: the module is not loaded.
    NoFamily,
    /// The family has no multicast group of that name.
    NoMcastGroup(String),
    /// No interface of that name (for lacp-source).
    NoSuchDevice(String),
    /// Writing output failed (e.g. EPIPE).
    Output(io::Error),
    /// Socket, encoding or decoding failure.
    Local(String),
}

impl Error {
    /// Wraps any displayable local failure.
    pub fn local(e: impl fmt::Display) -> Self {
        Error::Local(e.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Kernel(k) => k.fmt(f),
            Error::NoFamily => write!(
                f,
                "{} module not loaded (modprobe {})",
                attrs::FAMILY_NAME,
                attrs::FAMILY_NAME
            ),
            Error::NoMcastGroup(g) => write!(
                f,
                "{} has no multicast group \"{g}\" (module too old?)",
                attrs::FAMILY_NAME
            ),
            Error::NoSuchDevice(d) => write!(f, "cannot find device \"{d}\""),
            Error::Output(e) => write!(f, "writing output: {e}"),
            Error::Local(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {}

impl From<KernelError> for Error {
    fn from(e: KernelError) -> Self {
        Error::Kernel(e)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Output(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_error_text() {
        let e = KernelError {
            errno: libc::EINVAL,
            msg: Some("weight out of range".into()),
            offset: Some(36),
            ..Default::default()
        };
        assert_eq!(e.to_string(), "Invalid argument: weight out of range");

        let e = KernelError {
            errno: libc::EINVAL,
            miss_type: Some(2),
            ..Default::default()
        };
        assert_eq!(e.to_string(), "Invalid argument: missing attribute name");

        let e = KernelError {
            errno: libc::EINVAL,
            miss_type: Some(1),
            miss_nest: Some(24),
            ..Default::default()
        };
        assert_eq!(
            e.to_string(),
            "Invalid argument: missing attribute member.ibdev"
        );

        let e = KernelError {
            errno: libc::EPERM,
            ..Default::default()
        };
        assert_eq!(e.to_string(), "Operation not permitted");
    }

    #[test]
    fn no_family_text() {
        assert_eq!(
            Error::NoFamily.to_string(),
            "rdma_mrbond module not loaded (modprobe rdma_mrbond)"
        );
    }
}
