package dev.waymark.engine

import java.security.MessageDigest

/** The app build a manifest must be for: what the app knows about itself. */
data class AppBuild(val app: String, val platform: String, val version: String) {
    override fun toString() = "$app $platform $version"
}

/** Why a manifest was refused as a whole; the table in use stays as it was. */
class ManifestError(val kind: Kind, message: String) : Exception("${kind.json}: $message") {
    enum class Kind(val json: String) {
        /** Not JSON (a truncated body lands here), or not an object. */
        NOT_JSON("notJSON"),
        /** `format` is not `waymark.manifest/1`, or a required field is missing or mistyped. */
        WRONG_FORMAT("wrongFormat"),
        /** For another app, platform or version. */
        WRONG_BUILD("wrongBuild"),
        /** `routesSha256` does not match the routes it came with. */
        INTEGRITY("integrity"),
        /** The schema it carries cannot be used, or is another build's. */
        INVALID_SCHEMA("invalidSchema")
    }
}

/**
 * A served manifest (`waymark.manifest/1`, `docs/formats.md`) decoded into one build's
 * table. Tolerant where a newer server may say more (unknown fields ignored; a route this
 * library cannot read, or this build cannot compile, left out and named in [leftOut]);
 * strict where a wrong answer would be trusted (another build, a digest that does not
 * match, a schema that cannot be used: the whole manifest is refused).
 */
class Manifest private constructor(
    val build: AppBuild,
    /** Revisions only grow: a client never replaces its table with a lower one. */
    val revision: Long,
    val routesSha256: String,
    val resolver: Resolver,
    val leftOut: List<ValidationProblem>
) {
    companion object {
        const val FORMAT = "waymark.manifest/1"

        /** Decodes and checks [bytes] for [build]. - Complexity: O(bytes + routes²) at worst per shape. */
        fun decode(bytes: ByteArray, build: AppBuild, nowMicroseconds: Long = 0): Manifest {
            val json = try {
                JsonReader().parse(bytes)
            } catch (error: JsonError) {
                throw ManifestError(ManifestError.Kind.NOT_JSON, "The manifest is not JSON: ${error.message}")
            }
            return decode(json, build, nowMicroseconds)
        }

        fun decode(json: JsonValue, build: AppBuild, nowMicroseconds: Long = 0): Manifest {
            val o = json.obj ?: throw ManifestError(ManifestError.Kind.NOT_JSON, "The manifest is ${json.typeName}, not an object.")
            if (o["format"]?.string != FORMAT) throw ManifestError(ManifestError.Kind.WRONG_FORMAT, "The document's format is not $FORMAT.")
            fun string(key: String) = o[key]?.string ?: throw ManifestError(ManifestError.Kind.WRONG_FORMAT, "The manifest has no $key string.")
            val served = AppBuild(string("app"), string("platform"), string("version"))
            val digest = string("routesSha256")
            if (served != build) throw ManifestError(ManifestError.Kind.WRONG_BUILD, "The manifest is for $served, not $build.")
            val revision = o["revision"]?.long
            if (revision == null || revision <= 0) throw ManifestError(ManifestError.Kind.WRONG_FORMAT, "The manifest's revision is not a positive whole number.")
            val routes = o["routes"]?.list ?: throw ManifestError(ManifestError.Kind.WRONG_FORMAT, "The manifest has no routes list.")
            val actual = canonicalRoutesDigest(JsonValue.Array(routes))
            if (digest != actual) throw ManifestError(ManifestError.Kind.INTEGRITY, "The routes hash to $actual, the manifest says $digest.")
            val schemaJson = o["schema"] ?: throw ManifestError(ManifestError.Kind.WRONG_FORMAT, "The manifest has no schema.")
            val schema = try {
                Schema.decode(schemaJson)
            } catch (error: SchemaError) {
                throw ManifestError(ManifestError.Kind.INVALID_SCHEMA, "The manifest's schema cannot be used. ${error.message}")
            }
            if (AppBuild(schema.app, schema.platform, schema.version) != build) {
                throw ManifestError(ManifestError.Kind.INVALID_SCHEMA, "The manifest carries the schema of ${schema.app} ${schema.buildName}, not $build.")
            }
            val wrapper = JsonValue.obj("format" to JsonValue.Text(RoutesDocument.FORMAT), "app" to JsonValue.Text(served.app),
                "routes" to JsonValue.Array(routes))
            val (document, problems) = RoutesDocument.decode(wrapper)
            // The wrapper is ours and well-formed, so the document exists; its per-route errors name what was left out.
            val resolver = Resolver(schema, RouteAnalysis(document!!, nowMicroseconds))
            val leftOut = problems.filter { it.severity == Severity.ERROR } + resolver.leftOut
            return Manifest(build, revision, digest, resolver, leftOut)
        }

        /** SHA-256, lowercase hex, of [routes] in Waymark's canonical JSON: what `routesSha256` holds. */
        fun canonicalRoutesDigest(routes: JsonValue): String {
            val hash = MessageDigest.getInstance("SHA-256").digest(routes.canonical().toByteArray(Charsets.UTF_8))
            return hexLowercase(hash)
        }
    }
}
