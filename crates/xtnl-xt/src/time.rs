//! `-m time` rev 0 (`struct xt_time_info`, include/uapi/linux/netfilter/xt_time.h): the
//! date range in seconds since the epoch (UTC), the daytime range in seconds since
//! midnight, the month days (bit N = day N) and week days (bit N = day N, Monday 1), and
//! the flags. 22 bytes of fields, 24 with the struct's padding.

use super::layout::xt_struct;

xt_struct!(
    /// The fields as iptables' `time_init` fills them by default: every day, all day, no
    /// date bound ([`TIME_DATE_STOP_NONE`]).
    TimeInfo, "xt_time_info", 24, {
    date_start: u32 = 0,
    date_stop: u32 = 4,
    daytime_start: u32 = 8,
    daytime_stop: u32 = 12,
    monthdays_match: u32 = 16,
    weekdays_match: u8 = 20,
    flags: u8 = 21,
});

/// `XT_TIME_LOCAL_TZ`: the kernel's time zone instead of UTC (`--kerneltz`).
pub const XT_TIME_LOCAL_TZ: u8 = 1;
/// `XT_TIME_CONTIGUOUS`: a daytime range past midnight is one range (`--contiguous`).
pub const XT_TIME_CONTIGUOUS: u8 = 2;
/// `XT_TIME_ALL_MONTHDAYS`: bits 1 to 31.
pub const TIME_ALL_MONTHDAYS: u32 = 0xffff_fffe;
/// `XT_TIME_ALL_WEEKDAYS`: bits 1 (Monday) to 7 (Sunday).
pub const TIME_ALL_WEEKDAYS: u8 = 0xfe;
/// `XT_TIME_MAX_DAYTIME`: 23:59:59.
pub const TIME_MAX_DAYTIME: u32 = 24 * 60 * 60 - 1;
/// iptables' "no end date" (`INT_MAX`, 2038-01-19T03:14:07).
pub const TIME_DATE_STOP_NONE: u32 = i32::MAX as u32;

impl TimeInfo {
    /// What `time_init` writes before any option: every day, all day, no date bound.
    pub fn defaults() -> Self {
        TimeInfo {
            date_start: 0,
            date_stop: TIME_DATE_STOP_NONE,
            daytime_start: 0,
            daytime_stop: TIME_MAX_DAYTIME,
            monthdays_match: TIME_ALL_MONTHDAYS,
            weekdays_match: TIME_ALL_WEEKDAYS,
            flags: 0,
        }
    }
}
