//! clv-schedule: builds a Clairvoyant reduction schedule and reports or draws it; `--bench`
//! times the generator in use (`holders`) against the paper's segment tree and the linear
//! reference.
use oxmpi::clairvoyant::pattern::{draw, Pattern, Rng, UNIT};
use oxmpi::clairvoyant::{holders, linear, segtree, verify, Problem, Schedule};
use std::time::Instant;

const USAGE: &str = "\
Usage: clv-schedule --procs P --segments N [--root R] [--round D]
                    (--arrivals a0,a1,... | --pattern uniform|skewed [--seed S])
                    [--json] [--compare-linear] [--verify] [--svg FILE]
       clv-schedule --bench [--sizes 32,64,...] [--reps K] [--seed S] [--no-linear] [--no-segtree]
                    [--portable]

Builds the Clairvoyant reduce schedule (Proficz & Ocetkiewicz 2021) for P processes arriving at
the given times (in units of the paper: the round length D is in the same unit) and N segments.
--pattern draws arrivals per the paper's section 5.7 protocol (uniform: U[0, P+0.1] and a random
root; skewed: all 0 but the last at N, root 0), and the round length U[0.001, 1] when --round is
not given. Times are quantised to 1e-6 unit.

  --json            print rounds, transfers, copies, build_ns (and with --compare-linear:
                    linear_ns, segtree_ns, identical) as one JSON object
  --compare-linear  also run the linear reference and the segment-tree generators and compare
  --verify          replay the schedule and check it reduces correctly
  --svg FILE        draw the schedule: rounds with traffic across, processes down, one arrow
                    per transfer, coloured by segment
  --bench           time the generators at P = N = each size (default 32,64,128,256,512,4096),
                    uniform and skewed patterns, K repetitions (default 5): best and mean ms
                    of the generator in use, best of the segment tree (up to P = 1024; not
                    with --no-segtree) and of the linear reference (up to P = 512; not with
                    --no-linear), which must give the same schedules
  --portable        time the portable build of the generator (not the AVX2 one the CPU may
                    have chosen)
  -h, --help        this help";

fn die(msg: &str) -> ! {
    eprintln!("clv-schedule: {msg}");
    std::process::exit(2)
}

fn num<T: std::str::FromStr>(flag: &str, v: Option<String>) -> T {
    let v = v.unwrap_or_else(|| die(&format!("{flag} needs a value")));
    v.parse().unwrap_or_else(|_| die(&format!("{flag}: bad value '{v}'")))
}

fn units(x: f64) -> i64 {
    (x * UNIT as f64).round() as i64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut procs, mut segs, mut root, mut round) = (None::<usize>, None::<usize>, None::<usize>, None::<f64>);
    let (mut arrivals, mut pattern, mut seed) = (None::<Vec<i64>>, None::<Pattern>, 1u64);
    let (mut json, mut cmp, mut check, mut svg, mut bench, mut sizes, mut reps, mut no_linear) =
        (false, false, false, None::<String>, false, vec![32, 64, 128, 256, 512, 4096], 5usize, false);
    let (mut no_segtree, mut portable) = (false, false);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return;
            }
            "--procs" => procs = Some(num(&a, args.next())),
            "--segments" => segs = Some(num(&a, args.next())),
            "--root" => root = Some(num(&a, args.next())),
            "--round" => round = Some(num(&a, args.next())),
            "--seed" => seed = num(&a, args.next()),
            "--reps" => reps = num::<usize>(&a, args.next()).max(1),
            "--arrivals" => {
                let v: String = num(&a, args.next());
                arrivals = Some(v.split(',').map(|x| units(x.trim().parse().unwrap_or_else(|_| die(&format!("--arrivals: bad time '{x}'"))))).collect());
            }
            "--pattern" => {
                pattern = Some(match num::<String>(&a, args.next()).as_str() {
                    "uniform" => Pattern::Uniform,
                    "skewed" => Pattern::Skewed,
                    p => die(&format!("--pattern: '{p}' is neither uniform nor skewed")),
                })
            }
            "--sizes" => {
                let v: String = num(&a, args.next());
                sizes = v.split(',').map(|x| x.trim().parse().unwrap_or_else(|_| die(&format!("--sizes: bad size '{x}'")))).collect();
            }
            "--json" => json = true,
            "--compare-linear" => cmp = true,
            "--verify" => check = true,
            "--no-linear" => no_linear = true,
            "--no-segtree" => no_segtree = true,
            "--portable" => portable = true,
            "--svg" => svg = Some(num(&a, args.next())),
            "--bench" => bench = true,
            _ => die(&format!("unknown argument '{a}' (see --help)")),
        }
    }
    if bench {
        return run_bench(&sizes, reps, seed, !no_linear, !no_segtree, if portable { holders::schedule_portable } else { holders::schedule });
    }
    let n = segs.unwrap_or_else(|| die("--segments is required"));
    let pb = match (arrivals, pattern) {
        (Some(a), None) => {
            if procs.is_some_and(|p| p != a.len()) {
                die(&format!("--procs {} but {} arrival times", procs.unwrap(), a.len()));
            }
            let round = round.map(units).unwrap_or(UNIT);
            Problem { root: root.unwrap_or(0), arrivals: a, segments: n, round, holds: Vec::new() }
        }
        (None, Some(pat)) => {
            let p = procs.unwrap_or_else(|| die("--procs is required with --pattern"));
            if p == 0 {
                die("--procs must be at least 1");
            }
            draw(pat, p, n, root, round.map(units), &mut Rng(seed))
        }
        _ => die("give exactly one of --arrivals and --pattern"),
    };
    if let Err(e) = pb.check() {
        die(&e);
    }
    let t = Instant::now();
    let s = holders::schedule(&pb);
    let build_ns = t.elapsed().as_nanos();
    let mut extra = String::new();
    if cmp {
        let t = Instant::now();
        let l = linear::schedule(&pb);
        let linear_ns = t.elapsed().as_nanos();
        let t = Instant::now();
        let st = segtree::schedule(&pb);
        let segtree_ns = t.elapsed().as_nanos();
        extra = format!(", \"linear_ns\": {linear_ns}, \"segtree_ns\": {segtree_ns}, \"identical\": {}", l == s && st == s);
    }
    if check {
        let ok = verify(&s, pb.arrivals.len(), n, pb.root);
        extra += &format!(", \"verified\": {}", ok.is_ok());
        if let Err(e) = ok {
            eprintln!("clv-schedule: the schedule does not verify: {e}");
        }
    }
    let copies = s.transfers.iter().filter(|t| t.copy).count();
    if json {
        println!(
            "{{\"procs\": {}, \"segments\": {n}, \"root\": {}, \"round\": {}, \"rounds\": {}, \"transfers\": {}, \"copies\": {copies}, \"build_ns\": {build_ns}{extra}}}",
            pb.arrivals.len(),
            pb.root,
            pb.round as f64 / UNIT as f64,
            s.rounds(),
            s.transfers.len()
        );
    } else {
        println!("P={} N={n} root={} d={}: {} rounds, {} transfers ({copies} copies), built in {build_ns} ns{extra}", pb.arrivals.len(), pb.root, pb.round as f64 / UNIT as f64, s.rounds(), s.transfers.len());
        if s.transfers.len() <= 200 {
            for t in &s.transfers {
                println!("  round {:>4}: {} -> {} segment {}{}", t.round, t.from, t.to, t.seg, if t.copy { " (copy)" } else { "" });
            }
        }
    }
    if let Some(f) = svg {
        std::fs::write(&f, draw_svg(&s, pb.arrivals.len(), n)).unwrap_or_else(|e| die(&format!("cannot write {f}: {e}")));
    }
}

/// Rounds with traffic across (idle stretches collapsed), processes down; an arrow from the
/// sender's row to the receiver's, coloured by segment; a copy is dashed.
fn draw_svg(s: &Schedule, procs: usize, segs: usize) -> String {
    let mut cols: Vec<u64> = s.transfers.iter().map(|t| t.round).collect();
    cols.dedup();
    let (cw, rh, left, top) = (28.0, 22.0, 60.0, 30.0);
    let (wd, ht) = (left + cw * cols.len() as f64 + 20.0, top + rh * procs as f64 + 20.0);
    let mut o = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{wd}\" height=\"{ht}\" font-family=\"monospace\" font-size=\"10\">\n");
    o += "<defs><marker id=\"a\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"5\" markerHeight=\"5\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\"/></marker></defs>\n";
    for p in 0..procs {
        let y = top + rh * p as f64 + rh / 2.0;
        o += &format!("<text x=\"4\" y=\"{}\">p{p}</text><line x1=\"{left}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#ddd\"/>\n", y + 3.0, wd - 20.0);
    }
    for (i, r) in cols.iter().enumerate() {
        o += &format!("<text x=\"{}\" y=\"14\">{r}</text>\n", left + cw * i as f64 + 2.0);
    }
    let mut ci = 0;
    for t in &s.transfers {
        while cols[ci] != t.round {
            ci += 1;
        }
        let x = left + cw * ci as f64 + cw / 2.0 + (t.seg as f64 / segs as f64 - 0.5) * cw * 0.6;
        let (y1, y2) = (top + rh * t.from as f64 + rh / 2.0, top + rh * t.to as f64 + rh / 2.0);
        let hue = 360.0 * t.seg as f64 / segs as f64;
        o += &format!(
            "<line x1=\"{x:.1}\" y1=\"{y1}\" x2=\"{x:.1}\" y2=\"{y2}\" stroke=\"hsl({hue:.0},70%,45%)\" stroke-width=\"2\"{} marker-end=\"url(#a)\"><title>round {} p{}->p{} segment {}</title></line>\n<circle cx=\"{x:.1}\" cy=\"{y1}\" r=\"3\" fill=\"hsl({hue:.0},70%,45%)\"/>\n",
            if t.copy { " stroke-dasharray=\"3,2\"" } else { "" },
            t.round,
            t.from,
            t.to,
            t.seg
        );
    }
    o + "</svg>\n"
}

/// Best and mean of `reps` timings of `f`, in ms.
fn time_ms(reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    let v: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().sum::<f64>() / v.len() as f64)
}

fn run_bench(sizes: &[usize], reps: usize, seed: u64, with_linear: bool, with_segtree: bool, gen: fn(&Problem) -> Schedule) {
    println!("{:>5} {:>8} {:>7} {:>9} {:>11} {:>11} {:>11} {:>11}", "P=N", "pattern", "rounds", "transfers", "best_ms", "mean_ms", "segtree_ms", "linear_ms");
    for &p in sizes {
        for pat in [Pattern::Uniform, Pattern::Skewed] {
            let pb = draw(pat, p, p, None, None, &mut Rng(seed ^ p as u64));
            let s = gen(&pb);
            let (best, mean) = time_ms(reps, || drop(std::hint::black_box(gen(&pb))));
            // The slower generators are timed (best of at most 3) and checked where they finish
            // in seconds.
            let other = |on: bool, max: usize, gen: fn(&Problem) -> Schedule, name: &str| {
                if !on || p > max {
                    return "-".to_string();
                }
                assert!(gen(&pb) == s, "{name} and holders disagree at P=N={p}");
                format!("{:.3}", time_ms(reps.min(3), || drop(std::hint::black_box(gen(&pb)))).0)
            };
            let st = other(with_segtree, 1024, segtree::schedule, "segtree");
            let lt = other(with_linear, 512, linear::schedule, "linear");
            println!("{p:>5} {:>8} {:>7} {:>9} {best:>11.3} {mean:>11.3} {st:>11} {lt:>11}", format!("{pat:?}").to_lowercase(), s.rounds(), s.transfers.len());
        }
    }
}
