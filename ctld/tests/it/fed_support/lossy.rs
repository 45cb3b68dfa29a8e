//! A dbd whose answers get lost: [`LoseAnswers`] wraps the federation service and, for the
//! first calls of one method, lets the call reach the dbd (and be applied) but answers the
//! caller `Unavailable` instead, as a dbd restarted or a connection cut after the commit would;
//! the calls after those may be refused (not applied, answered `FailedPrecondition`), as a dbd
//! back in a state that refuses them would.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use tonic::Status;
use tonic::body::Body;
use tonic::codegen::{Service, http};
use tonic::server::NamedService;

/// Which answers to lose, and how many calls came: shared with the test.
#[derive(Debug, Clone, Default)]
pub struct Loss {
    /// The gRPC path of the method (`/sluice.v1.FedArbiter/SubmitFedJob`).
    pub path: &'static str,
    left: Arc<AtomicUsize>,
    /// Calls to refuse once no answer is left to lose.
    refusals: Arc<AtomicUsize>,
    calls: Arc<AtomicUsize>,
    /// Losses of other methods, applied too.
    also: Vec<Loss>,
}

impl Loss {
    /// Loses the answers of the first `count` calls of `path`.
    pub fn first(path: &'static str, count: usize) -> Self {
        Self {
            path,
            left: Arc::new(AtomicUsize::new(count)),
            refusals: Arc::new(AtomicUsize::new(0)),
            calls: Arc::new(AtomicUsize::new(0)),
            also: Vec::new(),
        }
    }

    /// Refuses the `count` calls that follow the lost answers.
    pub fn then_refuse(self, count: usize) -> Self {
        self.refusals.store(count, Ordering::SeqCst);
        self
    }

    /// Loses the answers `other` names too (another method's; keep a clone to count them).
    pub fn and(mut self, other: Loss) -> Self {
        self.also.push(other);
        self
    }

    /// Calls of the method so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Answers still to lose.
    pub fn left(&self) -> usize {
        self.left.load(Ordering::SeqCst)
    }

    /// What becomes of this call (counts the call).
    fn take(&self, path: &str) -> Fate {
        if path != self.path {
            return self
                .also
                .iter()
                .map(|l| l.take(path))
                .find(|f| *f != Fate::Answered)
                .unwrap_or(Fate::Answered);
        }
        self.calls.fetch_add(1, Ordering::SeqCst);
        let one_less = |n: usize| n.checked_sub(1);
        if self
            .left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, one_less)
            .is_ok()
        {
            Fate::Lost
        } else if self
            .refusals
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, one_less)
            .is_ok()
        {
            Fate::Refused
        } else {
            Fate::Answered
        }
    }
}

/// What becomes of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Answered,
    /// Applied, its answer lost.
    Lost,
    /// Not applied, refused.
    Refused,
}

/// The wrapped service (see the module doc).
#[derive(Debug, Clone)]
pub struct LoseAnswers<S> {
    inner: S,
    loss: Loss,
}

impl<S> LoseAnswers<S> {
    /// `inner`, losing answers as `loss` says.
    pub fn new(inner: S, loss: Loss) -> Self {
        Self { inner, loss }
    }
}

impl<S: NamedService> NamedService for LoseAnswers<S> {
    const NAME: &'static str = S::NAME;
}

impl<S, B> Service<http::Request<B>> for LoseAnswers<S>
where
    S: Service<http::Request<B>, Response = http::Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let fate = self.loss.take(req.uri().path());
        if fate == Fate::Refused {
            return Box::pin(async {
                Ok(Status::failed_precondition("Not a valid federated job").into_http())
            });
        }
        let answer = self.inner.call(req);
        Box::pin(async move {
            // A unary handler has run (and its transaction committed) once its response is
            // ready: only the answer goes missing.
            let response = answer.await?;
            if fate == Fate::Lost {
                drop(response);
                return Ok(Status::unavailable("connection reset: answer lost").into_http());
            }
            Ok(response)
        })
    }
}
