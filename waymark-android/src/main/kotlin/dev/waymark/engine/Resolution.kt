package dev.waymark.engine

/** Why a link resolved to nothing: a value, never a crash. */
enum class NotFoundReason(val json: String) {
    MALFORMED("malformed"), UNKNOWN_ROUTE("unknownRoute"), VALIDATION_FAILED("validationFailed"), EXPIRED("expired")
}

/** What the resolver needs to know about the session and the moment: injected, never read from the device. */
data class ResolutionContext(
    val satisfied: Set<String> = emptySet(),
    /** Microseconds since 1970 (`Timestamp.microseconds`): windows compare with it as integers. */
    val nowMicroseconds: Long
)

/** An in-app navigation request by destination and typed params. */
data class DestinationRequest(val destination: String, val params: Map<String, ParamValue> = emptyMap())

/** What was asked, kept by a gate so it can be resolved again once the precondition holds. */
sealed class ResolutionRequest {
    data class Url(val url: String) : ResolutionRequest()
    data class Destination(val request: DestinationRequest) : ResolutionRequest()
}

/** The typed decision a link or request resolves to (`docs/resolution.md`). */
sealed class Resolution {
    abstract val outcome: String

    /** Resolved and allowed: everything the app needs to build its back stack. */
    data class Proceed(
        /** The route that matched; null for an in-app request. */
        val routeId: String?,
        val destination: String,
        val params: Map<String, ParamValue>,
        /** Root first: `["home", "orders", "orderDetail"]`. */
        val path: List<String>,
        val tab: String?,
        val presentation: Presentation
    ) : Resolution() { override val outcome get() = "proceed" }

    /** Resolved, but a precondition must be satisfied first; [resume] is resolved again afterwards. */
    data class Gated(val precondition: String, val routeId: String?, val destination: String, val resume: ResolutionRequest) :
        Resolution() { override val outcome get() = "gated" }

    /** Resolved to nothing, and why; [detail] is a sentence for people, not part of the result. */
    data class NotFound(val reason: NotFoundReason, val routeId: String? = null, val detail: String? = null) :
        Resolution() { override val outcome get() = "notFound" }

    /** The result contract's JSON (`docs/conformance.md`), `detail` left out. */
    val json: JsonValue
        get() {
            val members = LinkedHashMap<String, JsonValue>()
            members["outcome"] = JsonValue.Text(outcome)
            when (this) {
                is Proceed -> {
                    routeId?.let { members["route"] = JsonValue.Text(it) }
                    members["destination"] = JsonValue.Text(destination)
                    members["params"] = JsonValue.Object(params.mapValues { it.value.json })
                    members["path"] = JsonValue.Array(path.map { JsonValue.Text(it) })
                    tab?.let { members["tab"] = JsonValue.Text(it) }
                    members["presentation"] = JsonValue.Text(presentation.json)
                }
                is Gated -> {
                    routeId?.let { members["route"] = JsonValue.Text(it) }
                    members["destination"] = JsonValue.Text(destination)
                    members["precondition"] = JsonValue.Text(precondition)
                }
                is NotFound -> {
                    members["reason"] = JsonValue.Text(reason.json)
                    routeId?.let { members["route"] = JsonValue.Text(it) }
                }
            }
            return JsonValue.Object(members)
        }
}
