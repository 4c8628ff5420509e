//! Failures crossing to Java, in one place. Nothing unwinds into the JVM: every native method
//! runs its body under `catch_unwind` (jni's `with_env`), and a core error, a JNI error or a
//! panic becomes a `kafkalog.spark.KafkaLogException` whose message is `<kind>|<message>`:
//! the kind as the Python exceptions' `kind` attribute names it, then the core's message.

use crate::error::Error;
use jni::errors::ErrorPolicy;
use jni::strings::JNIString;
use jni::Env;

/// The Java class every failure is thrown as.
const EXCEPTION: &str = "kafkalog/spark/KafkaLogException";

/// A failure of a native method.
#[derive(Debug)]
pub(super) enum Failure {
    /// The core's error, with its kind and message.
    Core(Error),
    /// The JNI call itself failed (a Java exception may be pending).
    Jni(jni::errors::Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Core(e)
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Self {
        Failure::Jni(e)
    }
}

impl Failure {
    /// The kind and message Java gets.
    fn kind_and_message(&self) -> (&'static str, String) {
        match self {
            Failure::Core(e) => {
                let kind = match e.io_kind {
                    Some(std::io::ErrorKind::NotFound) => "file_not_found",
                    Some(std::io::ErrorKind::PermissionDenied) => "permission",
                    _ => e.kind.name(),
                };
                (kind, e.to_string())
            }
            Failure::Jni(e) => ("internal", format!("JNI: {e}")),
        }
    }
}

/// A request that is not what the Java side sends (a bug there, not bad input).
pub(super) fn bad_request(what: impl std::fmt::Display) -> Failure {
    Failure::Core(Error::invalid_argument(format!(
        "kafkalog JNI request: {what}"
    )))
}

fn throw(env: &mut Env<'_>, kind: &str, message: &str) {
    if env.exception_check() {
        return; // a Java exception is already on its way
    }
    let text = JNIString::from(format!("{kind}|{message}"));
    if env
        .throw_new(jni::jni_str!("kafkalog/spark/KafkaLogException"), text)
        .is_err()
        && !env.exception_check()
    {
        // The class could not be found: still never return without an exception.
        let _ = env.throw(format!("{EXCEPTION} missing; {kind}: {message}"));
    }
}

/// The error policy of every native method: throw, and return the type's default (null, 0).
pub(super) struct ThrowKafkaLog;

impl<T: Default> ErrorPolicy<T, Failure> for ThrowKafkaLog {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        err: Failure,
    ) -> jni::errors::Result<T> {
        let (kind, message) = err.kind_and_message();
        throw(env, kind, &message);
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let text = if let Some(s) = payload.downcast_ref::<&'static str>() {
            (*s).to_owned()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "a panic without a message".to_owned()
        };
        // Dropping a payload may itself panic: leak it instead.
        std::mem::forget(payload);
        throw(
            env,
            "internal",
            &format!("kafkalog bug (a panic, caught): {text}"),
        );
        Ok(T::default())
    }
}
