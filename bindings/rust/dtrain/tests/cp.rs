//! Context parallelism on a world of one: blockwise attention against a
//! direct computation, the merge of two key blocks, the zigzag layout, ring
//! attention and its gradients, refusals.

mod common;

use dtrain::{
    attention_merge, cp_positions, cp_shard, cp_unshard, AttentionSpec, CpLayout, SavedAttention, Sharding, Status,
};

const SPEC: AttentionSpec = AttentionSpec { q_heads: 2, kv_heads: 1, head_dim: 4, causal: false, scale: 0.5 };

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| (((i as u32 * 7919 + seed * 104729) % 1000) as f32) / 500.0 - 1.0).collect()
}

/// Attention of query `i`, head `h` over keys `0..keys`, in f64, straight from the formula.
fn direct(q: &[f32], k: &[f32], v: &[f32], i: usize, h: usize, keys: usize) -> (Vec<f64>, f64) {
    let d = SPEC.head_dim;
    let scores: Vec<f64> = (0..keys)
        .map(|j| (0..d).map(|c| q[(i * 2 + h) * d + c] as f64 * k[j * d + c] as f64).sum::<f64>() * SPEC.scale)
        .collect();
    let lse = scores.iter().map(|s| s.exp()).sum::<f64>().ln();
    let o = (0..d).map(|c| (0..keys).map(|j| (scores[j] - lse).exp() * v[j * d + c] as f64).sum()).collect();
    (o, lse)
}

#[test]
fn block_attention_and_merge_match_the_formula() {
    let (q, k, v) = (values(3 * 8, 1), values(5 * 4, 2), values(5 * 4, 3));
    let (mut o, mut lse) = (vec![0f32; 24], vec![0f32; 6]);
    SPEC.block(&q, &k[..12], &v[..12], None, &mut o, &mut lse).unwrap();
    let (mut o2, mut lse2) = (vec![0f32; 24], vec![0f32; 6]);
    SPEC.block(&q, &k[12..], &v[12..], None, &mut o2, &mut lse2).unwrap();
    attention_merge(2, 4, &mut o, &mut lse, &o2, &lse2).unwrap();
    for i in 0..3 {
        for h in 0..2 {
            let (want_o, want_lse) = direct(&q, &k, &v, i, h, 5);
            assert!((lse[i * 2 + h] as f64 - want_lse).abs() < 1e-5);
            for c in 0..4 {
                assert!((o[(i * 2 + h) * 4 + c] as f64 - want_o[c]).abs() < 1e-5);
            }
        }
    }
}

#[test]
fn causal_block_needs_positions() {
    let spec = AttentionSpec { causal: true, ..SPEC };
    let (q, k) = (values(8, 1), values(4, 2));
    let (mut o, mut lse) = (vec![0f32; 8], vec![0f32; 2]);
    let err = spec.block(&q, &k, &k, None, &mut o, &mut lse).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    spec.block(&q, &k, &k, Some((&[0], &[0])), &mut o, &mut lse).unwrap();
}

#[test]
fn zigzag_shards_and_unshards() {
    let full: Vec<f32> = (0..8 * 2).map(|x| x as f32).collect();
    let mut rebuilt = vec![0f32; 16];
    for rank in 0..2 {
        let mut at = [0i64; 4];
        cp_positions(CpLayout::Zigzag, 2, rank, &mut at).unwrap();
        assert_eq!(at, if rank == 0 { [0, 1, 6, 7] } else { [2, 3, 4, 5] });
        let mut local = vec![0f32; 8];
        cp_shard(CpLayout::Zigzag, 2, rank, &full, 2, &mut local).unwrap();
        assert_eq!(local[4], full[at[2] as usize * 2]);
        cp_unshard(CpLayout::Zigzag, 2, rank, &local, 2, &mut rebuilt).unwrap();
    }
    assert_eq!(rebuilt, full);
    let mut odd = [0i64; 3];
    assert_eq!(cp_positions(CpLayout::Zigzag, 2, 0, &mut odd).unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn sharded_attention_on_one_rank_is_block_attention_and_gives_gradients() {
    for sharding in [Sharding::Ring, Sharding::AllToAll] {
        sharded_on_one_rank(sharding);
    }
}

fn sharded_on_one_rank(sharding: Sharding) {
    let comm = common::world();
    let (q, k, v) = (values(4 * 8, 4), values(4 * 4, 5), values(4 * 4, 6));
    let (mut o, mut lse) = (vec![0f32; 32], vec![0f32; 8]);
    SPEC.sharded_forward(sharding, &comm, CpLayout::Zigzag, &q, &k, &v, &mut o, &mut lse).unwrap();
    let (mut want_o, mut want_lse) = (vec![0f32; 32], vec![0f32; 8]);
    SPEC.block(&q, &k, &v, None, &mut want_o, &mut want_lse).unwrap();
    assert_eq!((o.clone(), lse.clone()), (want_o, want_lse));

    // d_o = 1 everywhere: dv[j] is the attention each key got, summed over queries and heads.
    let d_o = vec![1f32; 32];
    let (mut dq, mut dk, mut dv) = (vec![0f32; 32], vec![0f32; 16], vec![0f32; 16]);
    let saved = SavedAttention { q: &q, k: &k, v: &v, o: &o, lse: &lse };
    SPEC.sharded_backward(sharding, &comm, CpLayout::Zigzag, &saved, &d_o, &mut dq, &mut dk, &mut dv).unwrap();
    let total: f32 = dv.iter().sum();
    assert!((total - 4.0 * 2.0 * 4.0).abs() < 1e-4, "{total}");
    let err = SPEC.sharded_forward(sharding, &comm, CpLayout::Zigzag, &q[..24], &k[..12], &v[..12], &mut o[..24], &mut lse[..6]);
    assert_eq!(err.unwrap_err().status, Status::InvalidArgument);
}
