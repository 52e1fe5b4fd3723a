//! Heatmaps of the byte matrices, one per kind, side by side in one SVG: cell colour from white
//! (nothing) through yellow to dark red (the largest value of that kind), axes labelled with
//! world ranks, a colour scale under each map. Cells carry a tooltip with the exact numbers.
use crate::json::Json;
use std::fmt::Write as _;

const CELL_MAX: f64 = 28.0;
const MAP: f64 = 360.0;

/// White -> yellow -> red -> dark red, for t in [0, 1].
fn colour(t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let (r, g, b) = if t <= 0.0 {
        (255.0, 255.0, 255.0)
    } else if t < 0.5 {
        let u = t / 0.5;
        (255.0, 255.0 - 40.0 * u, 200.0 - 200.0 * u)
    } else {
        let u = (t - 0.5) / 0.5;
        (255.0 - 125.0 * u, 215.0 - 215.0 * u, 0.0)
    };
    format!("rgb({},{},{})", r as u8, g as u8, b as u8)
}

fn human(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.1} GB", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.1} MB", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} kB", x / 1e3)
    } else {
        format!("{x} B")
    }
}

pub fn heatmaps(doc: &Json) -> String {
    let n = doc.get("ranks").map_or(0.0, Json::num) as usize;
    let cell = if n == 0 { CELL_MAX } else { (MAP / n as f64).min(CELL_MAX) };
    let side = cell * n as f64;
    let (left, top, gap) = (70.0, 60.0, 90.0);
    let width = left + 3.0 * (side + gap);
    let height = top + side + 120.0;
    let mut s = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    for (i, (k, title)) in crate::KINDS.iter().enumerate() {
        let x0 = left + i as f64 * (side + gap);
        let bytes = doc.get(k).and_then(|d| d.get("bytes")).map(Json::matrix).unwrap_or_default();
        let count = doc.get(k).and_then(|d| d.get("count")).map(Json::matrix).unwrap_or_default();
        let max = bytes.iter().flatten().cloned().fold(0.0, f64::max);
        let _ = writeln!(s, "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" font-weight=\"bold\">{k}: bytes sent</text>", x0, top - 38.0);
        let _ = writeln!(s, "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#555\">{title}</text>", x0, top - 24.0);
        for (r, row) in bytes.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                let msgs = count.get(r).and_then(|x| x.get(c)).copied().unwrap_or(0.0);
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{cell:.1}\" height=\"{cell:.1}\" fill=\"{}\" stroke=\"#ddd\" stroke-width=\"0.5\"><title>{r} -> {c}: {} in {msgs} messages</title></rect>",
                    x0 + c as f64 * cell,
                    top + r as f64 * cell,
                    colour(if max > 0.0 { v / max } else { 0.0 }),
                    human(*v)
                );
            }
        }
        let _ = writeln!(s, "<rect x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{side:.1}\" height=\"{side:.1}\" fill=\"none\" stroke=\"#333\"/>");
        // Tick labels: every rank when they fit, else every k-th.
        let step = ((12.0 / cell).ceil() as usize).max(1);
        for j in (0..n).step_by(step) {
            let _ = writeln!(s, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{j}</text>", x0 + (j as f64 + 0.5) * cell, top - 4.0);
            let _ = writeln!(s, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{j}</text>", x0 - 4.0, top + (j as f64 + 0.5) * cell + 4.0);
        }
        let _ = writeln!(s, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">receiver (world rank)</text>", x0 + side / 2.0, top + side + 16.0);
        let _ = writeln!(s, "<text transform=\"translate({:.1},{:.1}) rotate(-90)\" text-anchor=\"middle\">sender (world rank)</text>", x0 - 24.0, top + side / 2.0);
        // The scale.
        let sy = top + side + 34.0;
        for k in 0..50 {
            let _ = writeln!(s, "<rect x=\"{:.1}\" y=\"{sy:.1}\" width=\"{:.2}\" height=\"10\" fill=\"{}\"/>", x0 + k as f64 * side / 50.0, side / 50.0 + 0.3, colour(k as f64 / 49.0));
        }
        let _ = writeln!(s, "<rect x=\"{x0:.1}\" y=\"{sy:.1}\" width=\"{side:.1}\" height=\"10\" fill=\"none\" stroke=\"#333\" stroke-width=\"0.5\"/>");
        let _ = writeln!(s, "<text x=\"{x0:.1}\" y=\"{:.1}\">0</text>", sy + 24.0);
        let _ = writeln!(s, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>", x0 + side, sy + 24.0, human(max));
    }
    s.push_str("</svg>\n");
    s
}
