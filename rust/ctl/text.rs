// SPDX-License-Identifier: GPL-2.0

//! Fixed-size text: device and bond names, and the sysfs pages that the
//! show callbacks format into.

#![deny(unsafe_code)]

use core::fmt::Write;

use kernel::str::CStr;

use crate::ffi::NAME_MAX;

/// A device or bond name: at most `NAME_MAX - 1` bytes, kept NUL-terminated.
#[derive(Clone, Copy)]
pub(crate) struct Name {
    bytes: [u8; NAME_MAX],
}

impl Name {
    /// `None` if `name` is empty, too long, or holds a NUL.
    pub(crate) fn new(name: &[u8]) -> Option<Self> {
        let name = name.split(|&b| b == 0).next().unwrap_or(&[]);
        if name.is_empty() || name.len() >= NAME_MAX {
            return None;
        }
        let mut bytes = [0u8; NAME_MAX];
        bytes.get_mut(..name.len())?.copy_from_slice(name);
        Some(Self { bytes })
    }

    /// The name without its NUL.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.bytes.split(|&b| b == 0).next().unwrap_or(&[])
    }

    /// The name as a C string.
    pub(crate) fn as_cstr(&self) -> &CStr {
        let len = self.as_bytes().len();
        self.bytes
            .get(..=len)
            .and_then(|b| CStr::from_bytes_with_nul(b).ok())
            .unwrap_or(kernel::c_str!(""))
    }

    /// Copies the name, NUL-terminated, into a C array.
    pub(crate) fn copy_to(&self, out: &mut [u8; NAME_MAX]) {
        *out = self.bytes;
    }
}

/// Text sink over a fixed buffer; output beyond it is cut, as sysfs does.
pub(crate) struct BufWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> BufWriter<'a> {
    /// Writes into `buf` from its start.
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// Bytes written so far.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Write for BufWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.buf.len().saturating_sub(self.len);
        let n = s.len().min(room);
        let dst = self
            .buf
            .get_mut(self.len..self.len.saturating_add(n))
            .ok_or(core::fmt::Error)?;
        // Byte by byte, not `copy_from_slice`: its length check is a panic
        // path (the lengths are equal here, which the compiler cannot
        // tell), which 6.12's objtool does not know as noreturn.
        for (to, from) in dst.iter_mut().zip(s.as_bytes()) {
            *to = *from;
        }
        self.len = self.len.saturating_add(n);
        Ok(())
    }
}

/// Formats `args` into a sysfs page; returns the length.
pub(crate) fn emit(page: &mut [u8], args: core::fmt::Arguments<'_>) -> isize {
    let mut w = BufWriter::new(page);
    let _ = w.write_fmt(args);
    isize::try_from(w.len()).unwrap_or(0)
}
