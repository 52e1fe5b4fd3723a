//! Point-to-point: matching, requests, send modes, probe.
