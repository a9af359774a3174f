from hostile_common import *  # noqa: F401,F403


def dot_versions(daemon):
    schema = open(os.path.join(EXAMPLE, "schema-ios-5.3.0.json")).read()
    answers = {}
    for version in (".", "..", "%2e", "%2E%2E", "5.3.0."):
        # The body names the same version, so only the version grammar can refuse it.
        named = schema.replace('"version": "5.3.0"', '"version": "%s"' % urllib.parse.unquote(version))
        status, body, _ = call(daemon.port, daemon.admin, "PUT", "/v1/schemas/ios/" + version, named.encode(), {"Content-Type": "application/json"})
        answers[version] = (status, (json_of(body) or {}).get("error", {}).get("code"))
    if any(status // 100 != 4 for status, _ in answers.values()):
        fail("dot-only or malformed schema versions answered %s" % answers)
    status, body, _ = call(daemon.port, daemon.admin, "GET", "/v1/schemas")
    if any('"%s"' % version in body.decode() for version in (".", "..")):
        fail("a dot-only version was stored: %s" % body[:300])
    print("hostile: schema versions %s refused (%s), none stored"
          % (", ".join(answers), ", ".join(sorted({"%d %s" % answer for answer in answers.values()}))))
