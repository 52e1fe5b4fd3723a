//! The PMI-1 wire format: one command per line, `cmd=NAME key=value key=value\n`, fields
//! separated by spaces, a value running up to the next space (so keys and values may hold neither
//! spaces nor `=`; the put side checks this with `check_token`).
use std::io;

/// One parsed line: the command name and its fields in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub cmd: String,
    pub fields: Vec<(String, String)>,
}

impl Line {
    /// The value of field `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The value of field `key`, or an error naming the reply that lacks it.
    pub fn need(&self, key: &str) -> io::Result<&str> {
        self.get(key).ok_or_else(|| bad(format!("PMI reply 'cmd={}' has no '{key}' field", self.cmd)))
    }

    /// The `rc` field read as a number (0 when absent, as in replies that carry none).
    pub fn rc(&self) -> io::Result<i64> {
        match self.get("rc") {
            None => Ok(0),
            Some(v) => v.parse().map_err(|_| bad(format!("PMI reply 'cmd={}' has rc={v}, not a number", self.cmd))),
        }
    }
}

fn bad(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Parses one line (without its newline). The first field must be `cmd`.
pub fn parse(text: &str) -> io::Result<Line> {
    let mut cmd = None;
    let mut fields = Vec::new();
    for tok in text.split(' ').filter(|t| !t.is_empty()) {
        let (k, v) = tok.split_once('=').ok_or_else(|| bad(format!("PMI line '{text}': field '{tok}' has no '='")))?;
        if cmd.is_none() {
            if k != "cmd" {
                return Err(bad(format!("PMI line '{text}' does not start with cmd=")));
            }
            cmd = Some(v.to_string());
        } else {
            fields.push((k.to_string(), v.to_string()));
        }
    }
    let cmd = cmd.ok_or_else(|| bad(format!("empty PMI line '{text}'")))?;
    Ok(Line { cmd, fields })
}

/// Formats a command line, newline included.
pub fn format(cmd: &str, fields: &[(&str, &str)]) -> String {
    let mut s = format!("cmd={cmd}");
    for (k, v) in fields {
        s.push(' ');
        s.push_str(k);
        s.push('=');
        s.push_str(v);
    }
    s.push('\n');
    s
}

/// Whether `s` can travel as a PMI-1 key or value: not empty, printable, and free of the
/// separators of both wire protocols (space, `=`, `;`).
pub fn check_token(what: &str, s: &str) -> io::Result<()> {
    if s.is_empty() || s.bytes().any(|b| b <= b' ' || b == b'=' || b == b';' || b >= 0x7f) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("PMI {what} '{s}' is empty or holds a space, '=', ';' or a control character")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_replies() {
        let l = parse("cmd=get_result rc=0 msg=success value=/proc/12/fd/5").unwrap();
        assert_eq!(l.cmd, "get_result");
        assert_eq!(l.get("value"), Some("/proc/12/fd/5"));
        assert_eq!(l.rc().unwrap(), 0);
        assert_eq!(l.get("missing"), None);
        assert!(l.need("missing").unwrap_err().to_string().contains("'missing'"));
        // Values may contain '=' after the first one (split at the first).
        assert_eq!(parse("cmd=x a=b=c").unwrap().get("a"), Some("b=c"));
        // Extra spaces are tolerated.
        assert_eq!(parse("cmd=barrier_out  ").unwrap().cmd, "barrier_out");
        assert_eq!(parse("cmd=get_result rc=-1 msg=key_x_not_found value=unknown").unwrap().rc().unwrap(), -1);
    }

    #[test]
    fn rejects_malformed_lines() {
        assert!(parse("").is_err());
        assert!(parse("hello").is_err());
        assert!(parse("rc=0 cmd=x").is_err());
        assert!(parse("cmd=x rc=zero").unwrap().rc().is_err());
    }

    #[test]
    fn formats_and_checks() {
        assert_eq!(format("put", &[("kvsname", "k"), ("key", "a"), ("value", "b")]), "cmd=put kvsname=k key=a value=b\n");
        assert_eq!(format("barrier_in", &[]), "cmd=barrier_in\n");
        assert!(check_token("value", "/proc/1/fd/3:4711").is_ok());
        for bad in ["", "a b", "a=b", "a;b", "a\nb"] {
            assert!(check_token("value", bad).is_err(), "{bad:?}");
        }
    }
}
