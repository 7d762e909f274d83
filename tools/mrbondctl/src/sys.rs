// SPDX-License-Identifier: GPL-2.0
//! Thin safe wrappers over the few libc calls mrbondctl needs:
//! `if_nametoindex`, `if_indextoname`, `strerror_r` and `poll`.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

/// `if_nametoindex(3)`; `None` if there is no such interface.
pub fn if_nametoindex(name: &str) -> Option<u32> {
    let c = CString::new(name).ok()?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    (idx != 0).then_some(idx)
}

/// `if_indextoname(3)`; `None` if no interface has that index (any more).
pub fn if_indextoname(index: u32) -> Option<String> {
    let mut buf = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: `buf` has the IF_NAMESIZE bytes if_indextoname may write.
    let p = unsafe { libc::if_indextoname(index, buf.as_mut_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: on success if_indextoname stored a NUL-terminated name in `buf`.
    let name = unsafe { CStr::from_ptr(buf.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}

/// `strerror(3)` of a positive errno, without Rust's " (os error N)" suffix.
pub fn strerror(errno: i32) -> String {
    let mut buf = [0 as libc::c_char; 256];
    // SAFETY: `buf` is writable for buf.len() bytes; the XSI strerror_r
    // (which the libc crate binds on Linux) NUL-terminates on success.
    let rc = unsafe { libc::strerror_r(errno, buf.as_mut_ptr(), buf.len()) };
    if rc != 0 {
        return format!("Unknown error {errno}");
    }
    // SAFETY: strerror_r succeeded, so `buf` holds a NUL-terminated string.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Waits until `fd` is readable or `timeout` passes (`None`: forever).
/// Returns whether it is readable. EINTR counts as "not yet readable".
pub fn wait_readable(fd: RawFd, timeout: Option<Duration>) -> io::Result<bool> {
    let ms = match timeout {
        None => -1,
        Some(t) => libc::c_int::try_from(t.as_millis().max(1)).unwrap_or(libc::c_int::MAX),
    };
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, nfds = 1.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(rc > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strerror_matches_libc_text() {
        assert_eq!(strerror(libc::EINVAL), "Invalid argument");
        assert_eq!(strerror(libc::ENOENT), "No such file or directory");
    }

    #[test]
    fn loopback_round_trips() {
        // "lo" exists in every network namespace.
        if let Some(idx) = if_nametoindex("lo") {
            assert_eq!(if_indextoname(idx).as_deref(), Some("lo"));
        }
        assert_eq!(if_nametoindex("no-such-if-xyz"), None);
        assert_eq!(if_nametoindex("bad\0name"), None);
    }
}
