import Foundation

/// Judges a routes document against the schemas of the app versions it must serve, and
/// returns every problem, not just the first.
public enum Validator {
    /// Validates raw JSON (what marketing submits).
    /// `workLimit`: see `RouteAnalysis.init`.
    public static func validate(_ json: JSONValue, against schemas: [Schema], now: Date = Date(),
                                workLimit: Int = RouteAnalysis.defaultWorkLimit) -> ValidationReport {
        var (document, report) = RoutesDocument.decodeReporting(json)
        guard let document else { return report }
        report.append(validate(RouteAnalysis(document: document, now: now, workLimit: workLimit), against: schemas))
        return report
    }

    /// The report for an analysed document: structural problems, plus what each app build
    /// makes of each route. A route some builds cannot resolve is a warning naming them;
    /// one no build can resolve is an error.
    /// - Complexity: O(routes × schemas) plus the analysis.
    public static func validate(_ analysis: RouteAnalysis, against schemas: [Schema]) -> ValidationReport {
        var report = analysis.report
        let document = analysis.document
        for schema in schemas where schema.app != document.app {
            report.append(ValidationProblem(.invalidFormat, at: JSONPath.root + "app",
                "These routes are for the app \"\(document.app)\", but the schema \(schema.buildName) is for \"\(schema.app)\"."))
        }
        let compilers = schemas.map(RouteCompiler.init)
        for (position, route) in document.routes.enumerated() {
            let perSchema = compilers.map { $0.compile(route, patterns: analysis.patterns[position]).problems }
            report.append(contentsOf: combine(perSchema, schemas: schemas, route: route))
        }
        return report
    }

    private static func combine(_ perSchema: [[ValidationProblem]], schemas: [Schema], route: RouteSpec) -> [ValidationProblem] {
        let failing = perSchema.indices.filter { !perSchema[$0].isEmpty }
        guard !failing.isEmpty else { return [] }
        if failing.count < schemas.count {
            return failing.map { index in
                let first = perSchema[index][0]
                return ValidationProblem(.unsupportedByVersion, at: first.path,
                    "Route \"\(route.id)\" will not reach app version \(schemas[index].buildName): \(first.message)")
            }
        }
        // Every build fails: what they have in common explains it; otherwise say how each fails.
        // (Looked up in sets: a route can bring thousands of problems, one per param it names.)
        struct Place: Hashable { let code: ProblemCode; let path: JSONPath }
        let others = perSchema.dropFirst().map { Set($0.map { Place(code: $0.code, path: $0.path) }) }
        let common = perSchema[0].filter { problem in others.allSatisfy { $0.contains(Place(code: problem.code, path: problem.path)) } }
        if !common.isEmpty { return common }
        let reasons = failing.map { "\(schemas[$0].buildName): \(perSchema[$0][0].message)" }.joined(separator: " ")
        return [ValidationProblem(.unsupportedByAllVersions, at: route.path,
            "No app version can open route \"\(route.id)\". \(reasons)")]
    }
}
