//! `PMI_process_mapping`, the job attribute where hydra and Slurm say which node each rank runs
//! on: `(vector,(start,nodes,per_node),...)`. Each block puts `per_node` consecutive ranks on each
//! of the nodes `start .. start + nodes`; when the blocks are used up and ranks remain, the
//! pattern repeats from the first block.
use std::io;

/// The node id of every rank of a job of `size` ranks, as `mapping` describes them.
pub fn nodes_of(mapping: &str, size: usize) -> io::Result<Vec<usize>> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, format!("PMI_process_mapping '{mapping}' is not (vector,(start,nodes,per_node),...)"));
    let s = mapping.trim();
    let inner = s.strip_prefix("(vector,").and_then(|r| r.strip_suffix(')')).ok_or_else(bad)?;
    let mut blocks = Vec::new();
    for part in inner.split("),") {
        let nums: Vec<usize> = part
            .trim_start_matches('(')
            .trim_end_matches(')')
            .split(',')
            .map(|n| n.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let [start, nodes, per_node] = nums[..] else { return Err(bad()) };
        if nodes == 0 || per_node == 0 {
            return Err(bad());
        }
        blocks.push((start, nodes, per_node));
    }
    if blocks.is_empty() {
        return Err(bad());
    }
    let mut out = Vec::with_capacity(size);
    'fill: loop {
        for &(start, nodes, per_node) in &blocks {
            for node in start..start + nodes {
                for _ in 0..per_node {
                    if out.len() == size {
                        break 'fill;
                    }
                    out.push(node);
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_blocks() {
        // hydra on one host with its default of one slot: the pattern repeats on node 0.
        assert_eq!(nodes_of("(vector,(0,1,1))", 3).unwrap(), vec![0, 0, 0]);
        assert_eq!(nodes_of("(vector,(0,2,2))", 4).unwrap(), vec![0, 0, 1, 1]);
        assert_eq!(nodes_of("(vector,(0,2,1))", 4).unwrap(), vec![0, 1, 0, 1]);
        assert_eq!(nodes_of("(vector,(0,2,2))", 2).unwrap(), vec![0, 0]);
        assert_eq!(nodes_of("(vector,(0,1,3),(1,1,1))", 4).unwrap(), vec![0, 0, 0, 1]);
        assert_eq!(nodes_of(" (vector,(0,1,4)) ", 0).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn rejects_garbage() {
        for m in ["", "(vector)", "(vector,(0,1))", "(vector,(0,0,1))", "(vector,(a,1,1))", "(list,(0,1,1))"] {
            assert!(nodes_of(m, 2).is_err(), "{m}");
        }
    }
}
