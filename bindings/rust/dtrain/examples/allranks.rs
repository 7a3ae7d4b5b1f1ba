//! Every collective and point-to-point call, and data parallelism (Ddp),
//! checked across real ranks; run under dtrun:
//!
//! ```sh
//! cargo build --offline --locked --example allranks
//! dtrun -n 2 target/debug/examples/allranks
//! dtrun -n 3 target/debug/examples/allranks
//! ```
//!
//! Each rank computes what every operation must give from the data that every
//! rank sends (a function of the rank) and compares. A mismatch prints what
//! differed, on which rank, and exits 1; dtrun then stops the other ranks and
//! exits non-zero. CTest runs it as rust_multirank_2 and rust_multirank_3. An
//! optional argument is the expected number of ranks.

use std::fmt::{Debug, Display};
use std::process::ExitCode;

use dtrain::{
    broadcast_parameters, Comm, Ddp, DdpOptions, Element, Optimizer, OptimizerKind,
    OptimizerOptions, P2pOp, Pipeline, PipelineSchedule, PipelineScheduleOptions, ReduceOp, Request,
    ScheduleKind, StageFunctions, Status,
};

/// Small and odd: the eager path.
const SMALL: usize = 13;
/// More than 64 KiB for every element type used: the large-message path.
const LARGE: usize = 40_000;

/// Why a step failed: a wrong result or an unexpected library error.
struct Failure(String);

impl From<dtrain::Error> for Failure {
    fn from(error: dtrain::Error) -> Failure {
        Failure(format!("unexpected error: {error}"))
    }
}

type Outcome<T = ()> = Result<T, Failure>;

/// One named step of the run.
type Step<'a> = (&'static str, Box<dyn FnOnce(&mut Checks) -> Outcome + 'a>);

fn fail<T>(message: impl Display) -> Outcome<T> {
    Err(Failure(message.to_string()))
}

/// The element types checked, with the arithmetic the references need.
trait Num: Element + PartialEq + PartialOrd + Debug {
    const NAME: &'static str;
    const FLOAT: bool;
    fn of(value: i64) -> Self;
    fn plus(self, other: Self) -> Self;
    fn divided_by(self, n: usize) -> Self;
    /// Equal, or for floats within a relative tolerance (the library picks
    /// the order of summation and of the division of a mean).
    fn close(self, other: Self) -> bool;
}

impl Num for f32 {
    const NAME: &'static str = "f32";
    const FLOAT: bool = true;
    fn of(value: i64) -> f32 {
        value as f32
    }
    fn plus(self, other: f32) -> f32 {
        self + other
    }
    fn divided_by(self, n: usize) -> f32 {
        self / n as f32
    }
    fn close(self, other: f32) -> bool {
        (self - other).abs() <= 1e-5 * other.abs().max(1e-30)
    }
}

impl Num for f64 {
    const NAME: &'static str = "f64";
    const FLOAT: bool = true;
    fn of(value: i64) -> f64 {
        value as f64
    }
    fn plus(self, other: f64) -> f64 {
        self + other
    }
    fn divided_by(self, n: usize) -> f64 {
        self / n as f64
    }
    fn close(self, other: f64) -> bool {
        (self - other).abs() <= 1e-12 * other.abs().max(1e-300)
    }
}

impl Num for i64 {
    const NAME: &'static str = "i64";
    const FLOAT: bool = false;
    fn of(value: i64) -> i64 {
        value
    }
    fn plus(self, other: i64) -> i64 {
        self + other
    }
    fn divided_by(self, n: usize) -> i64 {
        self / n as i64
    }
    fn close(self, other: i64) -> bool {
        self == other
    }
}

/// Counts the checks and reports the first mismatch of a slice.
struct Checks {
    count: usize,
}

impl Checks {
    fn equal<T: PartialEq + Debug>(&mut self, what: &str, got: &[T], want: &[T]) -> Outcome {
        self.compare(what, got, want, |a, b| a == b, "")
    }

    fn close<T: Num>(&mut self, what: &str, got: &[T], want: &[T]) -> Outcome {
        self.compare(what, got, want, |a, b| a.close(*b), " beyond the tolerance")
    }

    fn compare<T: Debug>(
        &mut self,
        what: &str,
        got: &[T],
        want: &[T],
        same: impl Fn(&T, &T) -> bool,
        how: &str,
    ) -> Outcome {
        self.count += 1;
        if got.len() != want.len() {
            return fail(format!(
                "{what}: {} elements, want {}",
                got.len(),
                want.len()
            ));
        }
        let bad: Vec<usize> = (0..got.len())
            .filter(|&i| !same(&got[i], &want[i]))
            .collect();
        if let Some(&i) = bad.first() {
            return fail(format!(
                "{what}: {} of {} elements differ{how}; first at index {i}: got {:?}, want {:?}",
                bad.len(),
                got.len(),
                got[i],
                want[i]
            ));
        }
        Ok(())
    }

    fn truth(&mut self, what: &str, condition: bool, detail: impl Display) -> Outcome {
        self.count += 1;
        if condition {
            Ok(())
        } else {
            fail(format!("{what}: {detail}"))
        }
    }

    /// Waits for a non-blocking operation.
    fn wait(&mut self, what: &str, mut request: Request<'_>) -> Outcome {
        // test() may say either while it runs; after wait() it is done.
        request.test()?;
        request
            .wait(-1)
            .map_err(|e| Failure(format!("{what}: wait: {e}")))?;
        self.count += 1;
        Ok(())
    }
}

fn rank_and_size(comm: &Comm<'_>) -> Outcome<(usize, usize)> {
    Ok((comm.rank()? as usize, comm.size()? as usize))
}

/// What `rank` reduces: small integers (exact in every type), some negative,
/// with a maximum that does not always belong to the same rank.
fn contribution<T: Num>(rank: usize, n: usize) -> Vec<T> {
    let rank = rank as i64;
    (0..n as i64)
        .map(|i| T::of((i * 7 + rank * 5) % 23 - 11 + rank))
        .collect()
}

fn reference<T: Num>(op: ReduceOp, size: usize, n: usize) -> Vec<T> {
    let mut out = contribution::<T>(0, n);
    for rank in 1..size {
        for (acc, x) in out.iter_mut().zip(contribution::<T>(rank, n)) {
            *acc = match op {
                ReduceOp::Sum | ReduceOp::Avg => acc.plus(x),
                ReduceOp::Max if x > *acc => x,
                ReduceOp::Max => *acc,
                _ => unreachable!("not checked here"),
            };
        }
    }
    if op == ReduceOp::Avg {
        out.iter_mut().for_each(|x| *x = x.divided_by(size));
    }
    out
}

/// What `sender` sends to `receiver`: distinct for every pair and element.
fn block<T: Num>(sender: usize, receiver: usize, n: usize) -> Vec<T> {
    (0..n as i64)
        .map(|i| T::of(i + 100 * receiver as i64 + 10_000 * sender as i64))
        .collect()
}

fn check_rank_and_size(comm: &Comm<'_>, c: &mut Checks, expected: Option<usize>) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    if let Some(expected) = expected {
        c.truth("size", size == expected, format!("{size}, want {expected}"))?;
    }
    c.truth("rank", me < size, format!("rank {me} of {size}"))?;
    let mut ranks = vec![0i64; size];
    comm.allgather(&[me as i64], &mut ranks)?;
    let want: Vec<i64> = (0..size as i64).collect();
    c.equal("every rank distinct (allgather of ranks)", &ranks, &want)
}

fn check_allreduce<T: Num>(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    let mut ops = vec![ReduceOp::Sum, ReduceOp::Max];
    if T::FLOAT {
        ops.push(ReduceOp::Avg);
    }
    for n in [SMALL, LARGE] {
        for &op in &ops {
            let want = reference::<T>(op, size, n);
            let what = format!("allreduce {op:?} {}[{n}]", T::NAME);
            let compare = |c: &mut Checks, what: &str, got: &[T]| {
                if op == ReduceOp::Avg {
                    c.close(what, got, &want)
                } else {
                    c.equal(what, got, &want)
                }
            };

            let send = contribution::<T>(me, n);
            let mut recv = vec![T::of(-99); n];
            comm.allreduce(&send, &mut recv, op)?;
            compare(c, &what, &recv)?;
            c.equal(
                &format!("{what}: send untouched"),
                &send,
                &contribution(me, n),
            )?;

            let mut buf = contribution::<T>(me, n);
            comm.allreduce_in_place(&mut buf, op)?;
            compare(c, &format!("{what} in place"), &buf)?;

            let mut recv = vec![T::of(0); n];
            c.wait(&what, comm.iallreduce(&send, &mut recv, op)?)?;
            compare(c, &format!("{what} non-blocking"), &recv)?;

            let mut buf = contribution::<T>(me, n);
            c.wait(&what, comm.iallreduce_in_place(&mut buf, op)?)?;
            compare(c, &format!("{what} non-blocking in place"), &buf)?;
        }
    }
    Ok(())
}

fn check_requests_in_flight(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    // Two operations in flight at once, waited for in reverse order.
    let mut a = contribution::<f64>(me, SMALL);
    let send_b = contribution::<i64>(me, LARGE);
    let mut b = vec![0i64; LARGE];
    let first = comm.iallreduce_in_place(&mut a, ReduceOp::Sum)?;
    let second = comm.iallreduce(&send_b, &mut b, ReduceOp::Max)?;
    c.wait("second of two in flight", second)?;
    c.wait("first of two in flight", first)?;
    c.equal(
        "two allreduces in flight: first",
        &a,
        &reference(ReduceOp::Sum, size, SMALL),
    )?;
    c.equal(
        "two allreduces in flight: second",
        &b,
        &reference(ReduceOp::Max, size, LARGE),
    )
}

fn check_allgather<T: Num>(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    for n in [SMALL, LARGE] {
        let mine: Vec<T> = (0..n as i64).map(|i| T::of(i + 1000 * me as i64)).collect();
        let want: Vec<T> = (0..size as i64)
            .flat_map(|r| (0..n as i64).map(move |i| T::of(i + 1000 * r)))
            .collect();
        let what = format!("allgather {}[{n}]", T::NAME);
        let mut recv = vec![T::of(0); size * n];
        comm.allgather(&mine, &mut recv)?;
        c.equal(&what, &recv, &want)?;
        let mut recv = vec![T::of(0); size * n];
        c.wait(&what, comm.iallgather(&mine, &mut recv)?)?;
        c.equal(&format!("{what} non-blocking"), &recv, &want)?;
    }
    Ok(())
}

fn check_reduce_scatter<T: Num>(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    for n in [SMALL, LARGE] {
        let send = contribution::<T>(me, size * n);
        for op in [ReduceOp::Sum, ReduceOp::Max] {
            let want = &reference::<T>(op, size, size * n)[me * n..(me + 1) * n];
            let what = format!("reduce_scatter {op:?} {}[{size}x{n}]", T::NAME);
            let mut recv = vec![T::of(0); n];
            comm.reduce_scatter(&send, &mut recv, op)?;
            c.equal(&what, &recv, want)?;
            let mut recv = vec![T::of(0); n];
            c.wait(&what, comm.ireduce_scatter(&send, &mut recv, op)?)?;
            c.equal(&format!("{what} non-blocking"), &recv, want)?;
        }
    }
    Ok(())
}

fn check_broadcast<T: Num>(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    let root = size - 1;
    for n in [SMALL, LARGE] {
        let want: Vec<T> = (0..n as i64).map(|i| T::of(i * 3 - 7)).collect();
        let what = format!("broadcast from rank {root} {}[{n}]", T::NAME);
        let mut buf = if me == root {
            want.clone()
        } else {
            vec![T::of(-1); n]
        };
        comm.broadcast(&mut buf, root as i32)?;
        c.equal(&what, &buf, &want)?;
        let mut buf = if me == root {
            want.clone()
        } else {
            vec![T::of(0); n]
        };
        c.wait(&what, comm.ibroadcast(&mut buf, root as i32)?)?;
        c.equal(&format!("{what} non-blocking"), &buf, &want)?;
    }
    Ok(())
}

fn check_alltoall<T: Num>(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    for n in [SMALL, LARGE / size] {
        let send: Vec<T> = (0..size).flat_map(|j| block::<T>(me, j, n)).collect();
        let want: Vec<T> = (0..size).flat_map(|r| block::<T>(r, me, n)).collect();
        let what = format!("alltoall {}[{size}x{n}]", T::NAME);
        let mut recv = vec![T::of(0); size * n];
        comm.alltoall(&send, &mut recv)?;
        c.equal(&what, &recv, &want)?;
        let mut recv = vec![T::of(0); size * n];
        c.wait(&what, comm.ialltoall(&send, &mut recv)?)?;
        c.equal(&format!("{what} non-blocking"), &recv, &want)?;
    }
    Ok(())
}

/// Uneven alltoallv counts: zero for some pairs, 1-4 for most, large for one.
fn vcount(sender: usize, receiver: usize) -> usize {
    if (sender, receiver) == (0, 1) {
        20_000
    } else {
        (sender * 3 + receiver * 2) % 5
    }
}

fn check_alltoallv<T: Num>(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    let send_counts: Vec<i64> = (0..size).map(|j| vcount(me, j) as i64).collect();
    let recv_counts: Vec<i64> = (0..size).map(|r| vcount(r, me) as i64).collect();
    let send: Vec<T> = (0..size)
        .flat_map(|j| block::<T>(me, j, vcount(me, j)))
        .collect();
    let want: Vec<T> = (0..size)
        .flat_map(|r| block::<T>(r, me, vcount(r, me)))
        .collect();
    let what = format!(
        "alltoallv {} send_counts {send_counts:?} recv_counts {recv_counts:?}",
        T::NAME
    );
    // One spare element at the end must stay as it was.
    let mut recv = vec![T::of(-5); want.len() + 1];
    comm.alltoallv(&send, &send_counts, &mut recv, &recv_counts)?;
    c.equal(&what, &recv[..want.len()], &want)?;
    c.equal(
        &format!("{what}: past the counted elements"),
        &recv[want.len()..],
        &[T::of(-5)],
    )?;
    let mut recv = vec![T::of(-5); want.len() + 1];
    c.wait(
        &what,
        comm.ialltoallv(&send, &send_counts, &mut recv, &recv_counts)?,
    )?;
    c.equal(&format!("{what} non-blocking"), &recv[..want.len()], &want)?;
    c.equal(
        &format!("{what} non-blocking: past the counted elements"),
        &recv[want.len()..],
        &[T::of(-5)],
    )
}

fn check_rooted<T: Num>(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    let n = SMALL;
    for root in 0..size {
        let is_root = me == root;
        let send = contribution::<T>(me, n);
        let what = format!("reduce Max {}[{n}] root {root}", T::NAME);
        let mut recv = vec![T::of(0); n];
        comm.reduce(
            &send,
            is_root.then_some(&mut recv[..]),
            ReduceOp::Max,
            root as i32,
        )?;
        if is_root {
            c.equal(&what, &recv, &reference::<T>(ReduceOp::Max, size, n))?;
        }
        let what = format!("gather {}[{n}] root {root}", T::NAME);
        let mine = block::<T>(me, root, n);
        let mut all = vec![T::of(0); size * n];
        c.wait(
            &what,
            comm.igather(&mine, is_root.then_some(&mut all[..]), root as i32)?,
        )?;
        if is_root {
            let want: Vec<T> = (0..size).flat_map(|r| block::<T>(r, root, n)).collect();
            c.equal(&what, &all, &want)?;
        }
        let what = format!("scatter {}[{n}] root {root}", T::NAME);
        let blocks: Vec<T> = (0..size).flat_map(|r| block::<T>(root, r, n)).collect();
        let mut mine = vec![T::of(0); n];
        comm.scatter(is_root.then_some(&blocks[..]), &mut mine, root as i32)?;
        c.equal(&what, &mine, &block::<T>(root, me, n))?;
    }
    // Uneven counts, some zero.
    let counts: Vec<i64> = (0..size).map(|r| vcount(r, 0) as i64).collect();
    let total: usize = counts.iter().map(|&k| k as usize).sum();
    let what = format!("allgatherv {} counts {counts:?}", T::NAME);
    let mut recv = vec![T::of(-5); total + 1];
    comm.allgatherv(&block::<T>(me, 0, vcount(me, 0)), &mut recv, &counts)?;
    let want: Vec<T> = (0..size)
        .flat_map(|r| block::<T>(r, 0, vcount(r, 0)))
        .collect();
    c.equal(&what, &recv[..total], &want)?;
    c.equal(
        &format!("{what}: past the counted elements"),
        &recv[total..],
        &[T::of(-5)],
    )?;
    let what = format!("reduce_scatterv Sum {} counts {counts:?}", T::NAME);
    let first: usize = counts[..me].iter().map(|&k| k as usize).sum();
    let mut mine = vec![T::of(0); counts[me] as usize];
    comm.reduce_scatterv(
        &contribution::<T>(me, total),
        &counts,
        &mut mine,
        ReduceOp::Sum,
    )?;
    let want = reference::<T>(ReduceOp::Sum, size, total);
    c.equal(&what, &mine, &want[first..first + counts[me] as usize])
}

fn check_p2p_group<T: Num>(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    let right = (me + 1) % size;
    let left = (me + size - 1) % size;
    // Each rank sends a large buffer to both neighbours before receiving.
    let n = LARGE;
    let (to_right, to_left) = (block::<T>(me, right, n), block::<T>(me, left + size, n));
    let mut from_left = vec![T::of(0); n];
    let mut from_right = vec![T::of(0); n];
    comm.p2p_group(vec![
        P2pOp::Send {
            buf: &to_right,
            peer: right as i32,
            tag: 1,
        },
        P2pOp::Send {
            buf: &to_left,
            peer: left as i32,
            tag: 2,
        },
        P2pOp::Recv {
            buf: &mut from_left,
            peer: left as i32,
            tag: 1,
        },
        P2pOp::Recv {
            buf: &mut from_right,
            peer: right as i32,
            tag: 2,
        },
    ])?;
    c.equal(
        &format!("p2p_group {} from the left", T::NAME),
        &from_left,
        &block::<T>(left, me, n),
    )?;
    c.equal(
        &format!("p2p_group {} from the right", T::NAME),
        &from_right,
        &block::<T>(right, me + size, n),
    )
}

fn check_send_recv<T: Num>(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    if size < 2 {
        return Ok(());
    }
    let right = (me + 1) % size;
    let left = (me + size - 1) % size;
    for n in [SMALL, LARGE] {
        // Around the ring both ways; the receive is posted first so that no
        // send waits on a peer that is itself sending.
        for (to, from, tag) in [(right, left, 1), (left, right, 2)] {
            let mut inbox = vec![T::of(0); n];
            let pending = comm.irecv(&mut inbox, from as i32, tag)?;
            comm.send(&block::<T>(me, to, n), to as i32, tag)?;
            c.wait("recv", pending)?;
            c.equal(
                &format!("recv {}[{n}] from rank {from} tag {tag}", T::NAME),
                &inbox,
                &block::<T>(from, me, n),
            )?;
        }
    }
    Ok(())
}

fn check_tags(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    if size < 2 {
        return Ok(());
    }
    let right = ((me + 1) % size) as i32;
    let left = ((me + size - 1) % size) as i32;
    // Tags pick the message: sent with tags 7 then 3, received 3 then 7.
    let sevens = [7.0f64; 4];
    let threes = [3.0f64; 6];
    let first = comm.isend(&sevens, right, 7)?;
    let second = comm.isend(&threes, right, 3)?;
    let mut got3 = [0.0f64; 6];
    let mut got7 = [0.0f64; 4];
    comm.recv(&mut got3, left, 3)?;
    comm.recv(&mut got7, left, 7)?;
    c.wait("isend tag 7", first)?;
    c.wait("isend tag 3", second)?;
    c.equal("recv tag 3 (sent second)", &got3, &threes)?;
    c.equal("recv tag 7 (sent first)", &got7, &sevens)?;

    // One tag keeps the order: three messages from rank 0 to the last rank.
    let last = size - 1;
    for k in 0..3i64 {
        if me == 0 {
            comm.send(&[k; 5], last as i32, 11)?;
        } else if me == last {
            let mut got = [-1i64; 5];
            comm.recv(&mut got, 0, 11)?;
            c.equal(&format!("message {k} with one tag in order"), &got, &[k; 5])?;
        }
    }
    Ok(())
}

fn check_split(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    let color = me % 2;
    // key -rank: the child orders its ranks by descending parent rank.
    let members: Vec<usize> = (0..size).rev().filter(|r| r % 2 == color).collect();
    let parity = if color == 1 { "odd" } else { "even" };
    {
        let child = match comm.split(Some(color as i32), -(me as i32))? {
            Some(child) => child,
            None => return fail("split with a color returned no communicator"),
        };
        let (child_rank, child_size) = rank_and_size(&child)?;
        let position = members.iter().position(|&r| r == me).unwrap();
        c.truth(
            "split child size",
            child_size == members.len(),
            format!("{child_size}, want {} (members {members:?})", members.len()),
        )?;
        c.truth(
            "split child rank",
            child_rank == position,
            format!("{child_rank}, want {position} (members {members:?})"),
        )?;
        let mut total = [me as i64];
        child.allreduce_in_place(&mut total, ReduceOp::Sum)?;
        let sum: i64 = members.iter().map(|&r| r as i64).sum();
        c.equal(&format!("allreduce on the {parity} child"), &total, &[sum])?;
        let mut gathered = vec![0i64; child_size];
        let mine = [me as i64];
        c.wait(
            "allgather on the child",
            child.iallgather(&mine, &mut gathered)?,
        )?;
        let want: Vec<i64> = members.iter().map(|&r| r as i64).collect();
        c.equal(
            &format!("allgather of parent ranks on the {parity} child"),
            &gathered,
            &want,
        )?;
        child.barrier()?;
    }

    // Color None leaves a rank out: rank 0 gets none, the rest a child.
    let color = if me == 0 { None } else { Some(5) };
    match (me, comm.split(color, 0)?) {
        (0, None) => c.truth("split with color None", true, "")?,
        (0, Some(_)) => return fail("split with color None returned a communicator"),
        (_, None) => return fail("split with a color returned no communicator"),
        (_, Some(child)) => {
            let (child_rank, child_size) = rank_and_size(&child)?;
            c.truth(
                "split without rank 0: size",
                child_size == size - 1,
                child_size,
            )?;
            c.truth(
                "split without rank 0: rank",
                child_rank == me - 1,
                child_rank,
            )?;
            let mut buf = [me as f64];
            child.allreduce_in_place(&mut buf, ReduceOp::Max)?;
            c.equal("allreduce max without rank 0", &buf, &[(size - 1) as f64])?;
        }
    }
    // The parent goes on after its children.
    check_rank_and_size(comm, c, Some(size))
}

fn check_bad_arguments(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    let s = size as i32;
    let peer = ((me + 1) % size) as i32;
    let mut short = [0f32; 5];
    let mut four = [0f64; 4];
    let mut ints = [0i64; 4];
    let calls: Vec<(&str, dtrain::Result<()>)> = vec![
        (
            "allreduce with mismatched lengths",
            comm.allreduce(&[0f32; 4], &mut short, ReduceOp::Sum),
        ),
        (
            "allreduce avg on i64",
            comm.allreduce_in_place(&mut ints, ReduceOp::Avg),
        ),
        ("broadcast from root = size", comm.broadcast(&mut four, s)),
        ("send to peer = size", comm.send(&[0f64; 4], s, 0)),
        ("recv with tag -1", comm.recv(&mut four, peer, -1)),
        (
            "alltoallv with too few counts",
            comm.alltoallv(
                &[0f64; 4],
                &vec![1; size - 1],
                &mut [0f64; 4],
                &vec![1; size - 1],
            ),
        ),
        (
            "non-blocking allgather into a short buffer",
            comm.iallgather(&[0f64; 3], &mut vec![0f64; 3 * size - 1])
                .map(drop),
        ),
    ];
    for (what, result) in calls {
        match result {
            Err(e) if e.status == Status::InvalidArgument => {
                c.truth(what, !e.message.is_empty(), "the error has no message")?
            }
            Err(e) => return fail(format!("{what}: {e}, want InvalidArgument")),
            Ok(()) => return fail(format!("{what}: no error, want InvalidArgument")),
        }
    }
    c.equal("refused allreduce left recv as it was", &short, &[0f32; 5])?;
    // Every rank refused the same calls; the communicator still works.
    let mut buf = contribution::<f64>(me, SMALL);
    comm.allreduce_in_place(&mut buf, ReduceOp::Sum)?;
    c.equal(
        "allreduce after the refused calls",
        &buf,
        &reference(ReduceOp::Sum, size, SMALL),
    )?;
    comm.barrier()?;
    Ok(())
}

/// `got` within `tolerance` of `want`, relative to values of at least 1
/// (the library divides by the number of ranks before it sums).
fn approx(c: &mut Checks, what: &str, got: &[f64], want: &[f64], tolerance: f64) -> Outcome {
    c.compare(
        what,
        got,
        want,
        |a, b| (a - b).abs() <= tolerance * b.abs().max(1.0),
        " beyond the tolerance",
    )
}

/// Ddp and broadcast_parameters across the ranks: averages (uniform,
/// accumulated, weighted), a DDP over an optimizer's gradients, and
/// refusals that reach every rank.
fn check_ddp(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    let (me, size) = rank_and_size(comm)?;
    let root = size - 1;

    // Replicas start from root's weights, integers included.
    let mut weights: Vec<f32> = (0..SMALL).map(|i| (i * (me + 1)) as f32).collect();
    let mut steps = [me as i64; 3];
    broadcast_parameters(comm, &mut [&mut weights[..]], root as i32)?;
    broadcast_parameters(comm, &mut [&mut steps[..]], root as i32)?;
    let want: Vec<f32> = (0..SMALL).map(|i| (i * (root + 1)) as f32).collect();
    c.equal("broadcast_parameters f32", &weights, &want)?;
    c.equal("broadcast_parameters i64", &steps, &[root as i64; 3])?;

    let lengths = [SMALL, LARGE, 7];
    let grads_of = |rank: usize| -> Vec<Vec<f64>> {
        lengths
            .iter()
            .enumerate()
            .map(|(k, &n)| contribution::<f64>(rank + k, n))
            .collect()
    };
    let mean_of = |weights: &[f64]| -> Vec<Vec<f64>> {
        let total: f64 = weights.iter().sum();
        (0..lengths.len())
            .map(|k| {
                let mut sum = vec![0.0; lengths[k]];
                for (r, w) in weights.iter().enumerate() {
                    for (acc, x) in sum.iter_mut().zip(&grads_of(r)[k]) {
                        *acc += w * x;
                    }
                }
                sum.iter().map(|x| x / total).collect()
            })
            .collect()
    };
    let uniform = mean_of(&vec![1.0; size]);

    // Uniform average over two steps, buckets of one gradient each, marked
    // in reverse order on even ranks and in forward order on odd ones.
    let mut grads = grads_of(me);
    {
        let options = DdpOptions {
            bucket_bytes: Some(1),
            ..DdpOptions::default()
        };
        let mut ddp = Ddp::new(
            comm,
            grads.iter_mut().map(|g| &mut g[..]).collect(),
            &options,
        )?;
        c.truth("Ddp bucket_count", ddp.bucket_count()? == 3, "not 3")?;
        for step in 0..2 {
            for (k, fresh) in grads_of(me).into_iter().enumerate() {
                ddp.grad_mut(k).copy_from_slice(&fresh);
            }
            let order: Vec<usize> = if me % 2 == 0 {
                vec![2, 1, 0]
            } else {
                vec![0, 1, 2]
            };
            for i in order {
                ddp.mark_ready(i)?;
            }
            ddp.wait(-1)?;
            for (k, want) in uniform.iter().enumerate() {
                approx(
                    c,
                    &format!("Ddp uniform step {step} gradient {k}"),
                    ddp.grad(k),
                    want,
                    1e-12,
                )?;
            }
        }
    }

    // Accumulation: the first micro-step inside no_sync only adds up.
    let mut grads: Vec<Vec<f64>> = lengths.iter().map(|&n| vec![0.0; n]).collect();
    {
        let mut ddp = Ddp::new(
            comm,
            grads.iter_mut().map(|g| &mut g[..]).collect(),
            &DdpOptions::default(),
        )?;
        let add_mine = |ddp: &mut Ddp<'_, f64>| {
            for (k, part) in grads_of(me).into_iter().enumerate() {
                ddp.grad_mut(k)
                    .iter_mut()
                    .zip(part)
                    .for_each(|(g, x)| *g += x);
            }
        };
        ddp.no_sync(|ddp| -> Outcome {
            add_mine(ddp);
            (0..3).try_for_each(|i| ddp.mark_ready(i))?;
            Ok(ddp.wait(-1)?)
        })??;
        add_mine(&mut ddp);
        (0..3).rev().try_for_each(|i| ddp.mark_ready(i))?;
        ddp.wait(-1)?;
    }
    for (k, want) in uniform.iter().enumerate() {
        let twice: Vec<f64> = want.iter().map(|x| 2.0 * x).collect();
        approx(
            c,
            &format!("Ddp no_sync accumulation gradient {k}"),
            &grads[k],
            &twice,
            1e-12,
        )?;
    }

    // Weighted by sample counts that differ by rank.
    let mut grads = grads_of(me);
    {
        let options = DdpOptions {
            weighted: true,
            ..DdpOptions::default()
        };
        let mut ddp = Ddp::new(
            comm,
            grads.iter_mut().map(|g| &mut g[..]).collect(),
            &options,
        )?;
        ddp.set_local_weight((me + 1) as f64)?;
        (0..3).try_for_each(|i| ddp.mark_ready(i))?;
        ddp.wait(-1)?;
    }
    let weighted = mean_of(&(1..=size).map(|w| w as f64).collect::<Vec<_>>());
    for (k, want) in weighted.iter().enumerate() {
        approx(
            c,
            &format!("Ddp weighted gradient {k}"),
            &grads[k],
            want,
            1e-12,
        )?;
    }

    // A DDP over an optimizer's gradients: one SGD step of lr 1 from the
    // same weights everywhere moves them by minus the average.
    let mut params = [0.5f32; SMALL];
    let mut opt_grads = [0.0f32; SMALL];
    {
        let sgd = OptimizerOptions {
            kind: OptimizerKind::Sgd,
            lr: Some(1.0),
            ..OptimizerOptions::default()
        };
        let mut opt = Optimizer::new(vec![&mut params[..]], vec![&mut opt_grads[..]], &sgd)?;
        let mut ddp = Ddp::with_optimizer(comm, &mut opt, &DdpOptions::default())?;
        let mine = contribution::<f32>(me, SMALL);
        ddp.grad_mut(0).copy_from_slice(&mine);
        ddp.mark_ready(0)?;
        ddp.wait(-1)?;
        ddp.optimizer().step()?;
    }
    let moved: Vec<f64> = params.iter().map(|&p| f64::from(p)).collect();
    let want: Vec<f64> = reference::<f64>(ReduceOp::Avg, size, SMALL)
        .iter()
        .map(|avg| 0.5 - avg)
        .collect();
    approx(c, "Ddp with_optimizer step", &moved, &want, 1e-6)?;

    // Refusals reach every rank: the rank with a bad argument gets
    // InvalidArgument, the others Mismatch; disagreements are Mismatch on all.
    let refuser = size - 1;
    let mut expect = |what: &str, result: dtrain::Result<()>, mine: Status, others: Status| {
        let want = if me == refuser { mine } else { others };
        match result {
            Err(e) if e.status == want => c.truth(what, !e.message.is_empty(), "no message"),
            Err(e) => fail(format!("{what}: {e}, want {want:?}")),
            Ok(()) => fail(format!("{what}: no error, want {want:?}")),
        }
    };
    let mut g = [0.0f32; SMALL];
    let bad_size = DdpOptions {
        bucket_bytes: Some(if me == refuser { 0 } else { 64 }),
        ..DdpOptions::default()
    };
    expect(
        "Ddp with bucket_bytes 0 on one rank",
        Ddp::new(comm, vec![&mut g[..]], &bad_size).map(drop),
        Status::InvalidArgument,
        Status::Mismatch,
    )?;
    let root = if me == refuser { size as i32 } else { 0 };
    expect(
        "broadcast_parameters from root = size on one rank",
        broadcast_parameters(comm, &mut [&mut g[..]], root),
        Status::InvalidArgument,
        Status::Mismatch,
    )?;
    if size > 1 {
        let mut longer = [0.0f32; SMALL + 1];
        let slice = if me == refuser {
            &mut longer[..]
        } else {
            &mut g[..]
        };
        expect(
            "Ddp with another length on one rank",
            Ddp::new(comm, vec![slice], &DdpOptions::default()).map(drop),
            Status::Mismatch,
            Status::Mismatch,
        )?;
    }
    // The communicator still works.
    let mut buf = contribution::<f64>(me, SMALL);
    comm.allreduce_in_place(&mut buf, ReduceOp::Sum)?;
    c.equal(
        "allreduce after the refused DDPs",
        &buf,
        &reference(ReduceOp::Sum, size, SMALL),
    )
}

/// The checks of one step for every element type.
macro_rules! typed {
    ($f:ident, $comm:expr, $c:expr) => {
        (|| -> Outcome {
            $f::<f32>($comm, $c)?;
            $f::<f64>($comm, $c)?;
            $f::<i64>($comm, $c)
        })()
    };
}

/// A pipeline over every rank, stage s multiplying by s + 2 and the loss
/// summing the output: the loss and each stage's weight gradient are exact
/// (f64), for 1F1B and zero-bubble H1.
fn check_pipeline(comm: &Comm<'_>, c: &mut Checks) -> Outcome {
    use std::cell::RefCell;
    use std::collections::HashMap;

    let (me, size) = rank_and_size(comm)?;
    let (n, m) = (3usize, 2 * size);
    let weights: Vec<f64> = (0..size).map(|s| (s + 2) as f64).collect();
    let w = weights[me];
    let xs: Vec<Vec<f64>> = (0..m)
        .map(|i| (0..n).map(|k| (k + i) as f64).collect())
        .collect();
    for kind in [ScheduleKind::OneFOneB, ScheduleKind::ZbH1] {
        let split = kind == ScheduleKind::ZbH1;
        let saved = RefCell::new(HashMap::<i32, Vec<f64>>::new());
        let grads = RefCell::new(HashMap::<i32, Vec<f64>>::new());
        let (loss, grad_w) = (RefCell::new(0.0f64), RefCell::new(0.0f64));
        let weight_grad = |i: i32| {
            let g = grads.borrow_mut().remove(&i).unwrap_or_default();
            let x = saved.borrow_mut().remove(&i).unwrap_or_default();
            *grad_w.borrow_mut() += g.iter().zip(&x).map(|(g, x)| g * x).sum::<f64>();
        };
        let functions = StageFunctions::<f64> {
            forward: Box::new(|_, i, input, output| {
                let x = input.map_or_else(|| xs[i as usize].clone(), <[f64]>::to_vec);
                match output {
                    Some(out) => out.iter_mut().zip(&x).for_each(|(o, x)| *o = w * x),
                    None => *loss.borrow_mut() += x.iter().map(|x| w * x).sum::<f64>(),
                }
                saved.borrow_mut().insert(i, x);
                Ok(())
            }),
            backward: Box::new(|_, i, grad_output, grad_input| {
                let g = grad_output.map_or_else(|| vec![1.0; n], <[f64]>::to_vec);
                if let Some(gi) = grad_input {
                    gi.iter_mut().zip(&g).for_each(|(o, g)| *o = w * g);
                }
                grads.borrow_mut().insert(i, g);
                if !split {
                    weight_grad(i);
                }
                Ok(())
            }),
            backward_weight: split.then(|| {
                Box::new(|_, i| {
                    weight_grad(i);
                    Ok(())
                }) as Box<dyn FnMut(i32, i32) -> dtrain::Result<()>>
            }),
            chunk_done: None,
        };
        let options = PipelineScheduleOptions {
            kind,
            stages: size as i32,
            microbatches: m as i32,
            chunks: None,
        };
        let schedule = PipelineSchedule::new(&options)?;
        let info = Pipeline::new(comm, &schedule, n, functions)?.step()?;
        let what = format!("pipeline {kind:?}");
        c.equal(
            &format!("{what} peak in flight"),
            &[info.peak_in_flight],
            &[schedule.peak_in_flight(me as i32)?],
        )?;
        let total: f64 = xs.iter().flatten().sum();
        let product: f64 = weights.iter().product();
        if me == size - 1 {
            c.equal(
                &format!("{what} loss"),
                &[*loss.borrow()],
                &[product * total],
            )?;
        }
        c.equal(
            &format!("{what} weight gradient"),
            &[*grad_w.borrow()],
            &[product / w * total],
        )?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let expected = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(_)) => {
            eprintln!("usage: allranks [EXPECTED_RANKS]");
            return ExitCode::from(2);
        }
    };
    let comm = match Comm::new() {
        Ok(comm) => comm,
        Err(e) => {
            eprintln!("FAIL: Comm::new: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (rank, size) = match rank_and_size(&comm) {
        Ok(rs) => rs,
        Err(Failure(message)) => {
            eprintln!("FAIL: rank and size: {message}");
            return ExitCode::FAILURE;
        }
    };
    let mut c = Checks { count: 0 };
    let c = &mut c;
    let comm = &comm;
    let steps: Vec<Step<'_>> = vec![
        (
            "rank and size",
            Box::new(|c| check_rank_and_size(comm, c, expected)),
        ),
        ("allreduce", Box::new(|c| typed!(check_allreduce, comm, c))),
        (
            "requests in flight",
            Box::new(|c| check_requests_in_flight(comm, c)),
        ),
        ("allgather", Box::new(|c| typed!(check_allgather, comm, c))),
        (
            "reduce_scatter",
            Box::new(|c| typed!(check_reduce_scatter, comm, c)),
        ),
        ("broadcast", Box::new(|c| typed!(check_broadcast, comm, c))),
        ("alltoall", Box::new(|c| typed!(check_alltoall, comm, c))),
        ("alltoallv", Box::new(|c| typed!(check_alltoallv, comm, c))),
        (
            "rooted and uneven collectives",
            Box::new(|c| typed!(check_rooted, comm, c)),
        ),
        ("p2p group", Box::new(|c| typed!(check_p2p_group, comm, c))),
        ("send/recv", Box::new(|c| typed!(check_send_recv, comm, c))),
        ("tags", Box::new(|c| check_tags(comm, c))),
        ("split", Box::new(|c| check_split(comm, c))),
        ("bad arguments", Box::new(|c| check_bad_arguments(comm, c))),
        ("data parallel", Box::new(|c| check_ddp(comm, c))),
        ("pipeline", Box::new(|c| check_pipeline(comm, c))),
        ("barrier", Box::new(|_| Ok(comm.barrier()?))),
    ];
    for (name, step) in steps {
        if let Err(Failure(message)) = step(c) {
            eprintln!("FAIL rank {rank} of {size}: {name}: {message}");
            return ExitCode::FAILURE;
        }
    }
    println!("rank {rank} of {size}: {} checks passed", c.count);
    ExitCode::SUCCESS
}
