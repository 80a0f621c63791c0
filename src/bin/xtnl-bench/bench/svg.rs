//! The SVG plot of the report: latency against N, log scales, one panel per operation and
//! one line per tool (drawn here, no plotting dependency).

use std::fmt::Write as _;
use std::time::Duration;

use super::report::thousands;
use super::{Floor, Op, Results, Tool};

fn colour(tool: Tool) -> &'static str {
    match tool {
        Tool::Library => "#1b9e77",
        Tool::Binary => "#d95f02",
        Tool::IptablesNft => "#7570b3",
        Tool::IptablesLegacy => "#e7298a",
        Tool::Nft => "#66a61e",
        Tool::NftRestore => "#e6ab02",
        Tool::LegacyRestore => "#a6761d",
    }
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn tick_label(log_us: i32) -> String {
    match log_us {
        i32::MIN..=-1 => format!("{} ns", 10f64.powi(log_us + 3)),
        0..=2 => format!("{} µs", 10i64.pow(log_us as u32)),
        3..=5 => format!("{} ms", 10i64.pow((log_us - 3) as u32)),
        _ => format!("{} s", 10f64.powi(log_us - 6)),
    }
}

/// One line of a panel: points are (log10 N, log10 µs).
struct Series {
    label: &'static str,
    colour: &'static str,
    dashed: bool,
    points: Vec<(f64, f64)>,
}

/// Latency (p50) against N, log scales, one panel per operation and one line per tool (the
/// bare batch dashed in the flush panel).
pub fn svg(r: &Results) -> String {
    const PW: f64 = 400.0;
    const PH: f64 = 290.0;
    const ML: f64 = 62.0;
    const MR: f64 = 26.0;
    const MT: f64 = 30.0;
    const MB: f64 = 42.0;
    let cols = 3;
    let width = PW * cols as f64;
    let height = PH * 2.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(
        s,
        "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"white\"/>"
    );
    let ns: Vec<f64> = r.sizes.iter().map(|&n| (n as f64).log10()).collect();
    let (xmin, xmax) = match (ns.first(), ns.last()) {
        (Some(&a), Some(&b)) if b > a => (a, b),
        (Some(&a), _) => (a - 0.5, a + 0.5),
        _ => (1.0, 4.0),
    };
    for (i, op) in Op::ALL.iter().enumerate() {
        let ox = (i % cols) as f64 * PW;
        let oy = (i / cols) as f64 * PH;
        let (x0, x1, y0, y1) = (ox + ML, ox + PW - MR, oy + MT, oy + PH - MB);
        let mut series: Vec<Series> = Vec::new();
        for tool in Tool::ALL {
            let pts: Vec<(f64, f64)> = r
                .sizes
                .iter()
                .filter_map(|&n| {
                    r.stats(*op, tool, n)
                        .filter(|st| st.p50 > Duration::ZERO)
                        .map(|st| ((n as f64).log10(), (st.p50.as_secs_f64() * 1e6).log10()))
                })
                .collect();
            if !pts.is_empty() {
                series.push(Series {
                    label: tool.label(),
                    colour: colour(tool),
                    dashed: false,
                    points: pts,
                });
            }
        }
        if *op == Op::Flush {
            let pts: Vec<(f64, f64)> = r
                .sizes
                .iter()
                .filter_map(|&n| {
                    r.floor(Floor::BareBatch, n).map(|st| {
                        (
                            (n as f64).log10(),
                            (st.p50.as_secs_f64() * 1e6).max(0.01).log10(),
                        )
                    })
                })
                .collect();
            if !pts.is_empty() {
                series.push(Series {
                    label: "bare batch",
                    colour: "#444444",
                    dashed: true,
                    points: pts,
                });
            }
        }
        let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
        let (lo, hi) = ys.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
        let (ylo, yhi) = if lo > hi {
            (0.0, 3.0)
        } else {
            let (a, b) = (lo.floor(), hi.ceil());
            (a, if b <= a { a + 1.0 } else { b })
        };
        let px = |x: f64| x0 + (x - xmin) / (xmax - xmin) * (x1 - x0);
        let py = |y: f64| y1 - (y - ylo) / (yhi - ylo) * (y1 - y0);
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" font-weight=\"bold\">{} (p50)</text>",
            x0,
            oy + 18.0,
            escape(op.label())
        );
        let _ = writeln!(
            s,
            "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#999\"/>",
            x1 - x0,
            y1 - y0
        );
        let mut d = ylo as i32;
        while d <= yhi as i32 {
            let y = py(d as f64);
            let _ = writeln!(
                s,
                "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>"
            );
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                x0 - 4.0,
                y + 4.0,
                escape(&tick_label(d))
            );
            d += 1;
        }
        for &n in &r.sizes {
            let x = px((n as f64).log10());
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{y1:.1}\" stroke=\"#eee\"/>"
            );
            let _ = writeln!(
                s,
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                y1 + 14.0,
                thousands(n)
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">reservations N (log scale)</text>",
            (x0 + x1) / 2.0,
            y1 + 30.0
        );
        for Series {
            label,
            colour: c,
            dashed,
            points: pts,
        } in &series
        {
            let points: Vec<String> = pts
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                s,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"{}><title>{}</title></polyline>",
                points.join(" "),
                if *dashed {
                    " stroke-dasharray=\"5,4\""
                } else {
                    ""
                },
                escape(label)
            );
            for &(x, y) in pts {
                let _ = writeln!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{c}\"/>",
                    px(x),
                    py(y)
                );
            }
        }
    }
    // Legend in the sixth cell.
    let lx = 2.0 * PW + ML;
    let ly = PH + MT;
    let _ = writeln!(
        s,
        "<text x=\"{lx:.1}\" y=\"{:.1}\" font-size=\"13\" font-weight=\"bold\">tools</text>",
        ly - 8.0
    );
    let mut entries: Vec<(&str, &str, bool)> = Tool::ALL
        .iter()
        .map(|&t| (t.label(), colour(t), false))
        .collect();
    entries.push(("bare batch (flush panel)", "#444444", true));
    for (i, (label, c, dashed)) in entries.iter().enumerate() {
        let y = ly + 12.0 + i as f64 * 22.0;
        let _ = writeln!(
            s,
            "<line x1=\"{lx:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{c}\" stroke-width=\"2\"{}/>",
            lx + 28.0,
            if *dashed {
                " stroke-dasharray=\"5,4\""
            } else {
                ""
            }
        );
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            lx + 36.0,
            y + 4.0,
            escape(label)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{lx:.1}\" y=\"{:.1}\" fill=\"#555\">{}</text>",
        ly + 12.0 + entries.len() as f64 * 22.0 + 6.0,
        escape(&format!(
            "{} CPUs, kernel {}, load {}",
            r.machine.nproc, r.machine.kernel, r.machine.load_start
        ))
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_read_well() {
        assert_eq!(tick_label(0), "1 µs");
        assert_eq!(tick_label(2), "100 µs");
        assert_eq!(tick_label(3), "1 ms");
        assert_eq!(tick_label(6), "1 s");
    }
}
