#!/usr/bin/env python3
"""Hostile load against a release `waymark serve` on loopback: each attack of the
"Hostile load" issue, as an attacker would script it, and the daemon shown unharmed.

  1. Anonymous 16 MiB bodies: 36 connections each send the head of a 16 MiB publish, with
     and without `Expect: 100-continue`, then start on the body. Each is answered 401
     before its body is read (never 100 Continue); the daemon's RSS stays flat.
  2. A 5,000-route campaign calendar (one pattern shape, overlapping windows) published
     while 4 clients flood it with refused publishes (no token, a forged token, a phone's
     token): a manifest fetched on a fresh connection every 100 ms throughout, none slower
     than 1 s (p50, p99 and the slowest printed).
  3. The audit log under that flood grows by a few lines, not a line per refusal; after
     SIGTERM its refusal lines count every refusal.
  4. A phone's telemetry:write token sends events spread over every minute of two days
     and every route, entry and outcome: the count cells stay under the cap plus the
     folded cells, every event is still counted; a token with a rate gets 429 with
     Retry-After past it.
  5. Silent connections: 1,500 from three addresses (127.0.0.2-4) against a daemon taking
     1,000 connections and 500 per peer: the per-peer cap resets the surplus, the limit
     sheds the idlest, and a new client is answered at once, not after a timeout.
  6. Versions `.`, `..` and their encodings are refused as schema versions.
  7. Heads without bodies: 260 at a time on a path no route takes (anonymous) and 260 on
     the phone's route with its token, half chunked, half declaring ~1 MiB, opened again as
     they are answered: legitimate telemetry posts and publishes from another address
     still succeed (at least 95 %); the unknown paths are answered 404 before their
     bodies, the phone's heads past their peer's share 503 and the rest 408 when their
     body does not start in 5 s; then 300 whole 1 MiB bodies on an unknown path leave RSS
     flat.
  8. A token at --rate 10 on 8 keep-alive connections over two event loops for 6 s gets
     at most 1.1 x its allowance through (the clock is read under the bucket's lock).
  9. A QR flood: 96 keep-alive connections from one address asking version-40 codes with a
     phone's read token, a new link each, while rollouts are started and aborted, routes
     published and validated and a scheduled publish fires: every change is answered, and
     so are the landing, the manifests and apple-app-site-association right after it.
 10. Slow QR readers: 200 connections from one address each get a new version-40 QR PNG
     and read nothing more: what waits for them stays within the peer's share of the
     output budget (the slowest reset past it) and RSS grows by less than the share + 32 MB.
 11. Big documents as marketing: a 10,000,000-byte note is refused naming the route and the
     field; a route of 600,000 patterns is refused 422 tooComplex by its count, before it is
     decoded (validating it held 214 MB before, past a document in work's 160 MiB); ~14 MB documents scheduled back to back stop at 64 MiB pending; cancelled and
     scheduled again, they leave the data directory as large as before (an ended schedule
     keeps no document); RSS, and a
     restart's time and RSS, stay under their bounds (a restart under 64 MB: pending
     schedules' routes are read from disk when they fire, never held).
 12. Request ids say nothing of the traffic: 100 requests between two ids do not show.
 13. A Host whose port is not digits (`storefront.example:evil`) is refused, not landed.
 14. Landings stay cacheable after a route window's edge passes (the clock moved with
     --clock-file): s-maxage counts down to the edge, then is 30 again.
 15. Refusals from 200 addresses of one /24 are one or two audit lines, under the network.
 16. Fallbacks at loopback, private or link-local addresses (any spelling) or localhost
     are refused.
 17. History read from disk by one token: 24 revisions of ~1.4 MB documents, then 32
     keep-alive connections with one routes:read token asking old revisions and diffs
     of them for 10 s: what is kept stays bounded (RSS grows by less than 64 MB + the
     output budget's peer share), the token is held to its share of the reads lane (503
     past it), and another token's reads of old revisions (from another address) and a
     publish are answered.
 18. A publishing token reads counts (the console's performance view) as fast as it may:
     a token at --rate 5 on 6 keep-alive connections asks the costliest query (30 days of
     hours, grouped by six dimensions, 1,000 groups) for 5 s over a month of hourly
     telemetry on every route: at most 1.1 x its allowance goes through (a burst of 25 and
     5 a second), the rest 429; manifests fetched every 100 ms meanwhile, none slower than
     1 s; and the same token may still validate at once (the read spent telemetry:read's
     bucket, not its publishing one).
 19. Draft impact as marketing (`POST /v1/revisions/N/impact`, a costly read): on a
     3,000-route revision with a week of telemetry on every route, one token floods 3,000-route
     drafts (every pattern moved, one catch-all taking them) from 24 keep-alive connections:
     it has at most 2 impacts queued or running (the rest 503 busy at once, so it cannot
     fill the first-come reads lane), while another marketer from another address is
     answered every time, manifests stay answered, and RSS stays under its bound; a draft
     past --max-document-bytes is refused 413 unread.
 20. Slow readers of a manifest sent from its memory file (35 KB, `BodyFile`): 300
     connections from one address ask for it and read nothing, while 5 publishes retire the
     view each group was given: what waits for them stays within the peer's share of the
     output budget and RSS within 32 MB, the retired views' files do not pile up, a fetch
     beside them gets the current bytes whole, and once they close only the live view's
     file is left.
 21. Counts read over a full store do not stall ingestion: with 360,000 cells of hourly
     telemetry over 12 days, a telemetry:read token at its default rate (all of it, as from
     many addresses) asks 88 days of hours by route from 2 connections for 5 s: telemetry
     posts (paced 5 ms apart, each a new connection on either loop) go on at least half as
     fast as in the 5 s before, and manifests stay answered (a query's scan runs on a
     window of the buckets taken under the store's lock, not under it; it used to hold it,
     and every loop posting a batch waited).
 22. Telemetry's vocabulary against a publisher of new route ids: marketing publishes 10
     documents of 40,000 new ids each (400,000 over history) and then schedules and cancels
     10 times, while a phone posts a batch every 5 ms: no post waits for a parser to be
     made (at most 2 posts over 100 ms; a parser used to be made from every id history
     ever had on the first post after each change, under a lock every loop's posts wait on:
     0.1 to 0.7 s each, and RSS grew ~11 MB a publish), the vocabulary holds the served ids and
     at most --telemetry-max-routes of history's, a schedule makes no parser, and RSS
     stays within 32 MB of what it was after the first publish.
 23. Ended schedules as marketing: one token schedules and cancels 1,100 times: the store
     keeps the last 1,000 to end (the earlier ones' files removed, ids never reused after
     a restart either), so GET /v1/schedules stays bounded; a dashboard's routes:read token asking
     for that list from 8 connections for 3 s is answered from one list made per store
     generation, and an app's manifests go on at least half as often as before (made for
     each request on the loop, the list cut them to a third).
 24. The app's token is everyone's: a fleet telemetry token (rate 200/s, scaled so one
     Python process outruns it; the default is 2,000/s) flooded for 6 s from one address on
     4 keep-alive connections, then from 48 addresses, while 16 installs at other addresses
     post a batch every 2 s: at least 95 % of the installs' posts are accepted each time;
     one address is held to its share (5 %, at least 10/s: 429 saying so) and 48 to what
     the quiet installs leave them (while the token is below half, only addresses at about
     a request a second or less are served); /metrics counts it. Before, one address spent
     the token's bucket and 8 installs got 12 of 80 posts through (the rollout guard goes
     blind on what it cannot count).
 25. Documents of many small mistakes as marketing: 1 MB and 1.6 MB of `{"a":0}` routes
     (three errors and a warning each) validated and published: each report lists at most
     1,000 errors and 1,000 warnings and counts the rest (`omitted`); 15 MB of them, 14 MB
     of `[0,0,…]` and one route naming 700,000 params are refused as they are parsed (at
     250,000 objects and lists or 1,000,000 values). The daemon's peak RSS grows at most
     256 MB over them all. Before, a 1 MB document's report was 70 MB and took the daemon
     to 449 MB, and 16 MB took it to 5.8 GB.
 26. Pipelined small answers nobody reads: 300 connections from one address each send
     1,200 requests for an unknown link on the link host (a 627-byte page) with a 4 KiB
     receive window, and never read: answers queued behind unwritten ones count in the
     output budget, so the address is held to its 32 MiB share (the slowest reset) and
     RSS grows at most 100 MB (each of the 2 event loops sheds its own connections, so
     until the other loop's next turn or sweep each may hold the share and a connection's
     1 MiB, 2 x 33 MiB, in a malloc arena of its own that keeps it; 30 MB besides);
     another client's manifest is answered meanwhile. Before,
     small answers counted nowhere: each such connection held up to 1 MiB (600 of them,
     +700 MB).
 27. One marketer fills the changes lane: a publishing token (no rate) validates
     30,000-route documents (3 MB, ~0.3 s of CPU each) from 24 connections for 8 s while a
     rollout runs: past its share (4 of the lane's 64 places) it is refused 503 at the
     head, body unread; the operator's abort, in a lane of its own, answers within 1 s;
     another marketer's validation and publish are answered (200, 201). Before, one
     token's flood held an abort 10 s and left others 503.
 28. Link checks that never end, with `serve --check-links`: six marketing tokens each
     validate, from 4 connections for 7 s, documents naming 200 fallbacks on a host that
     accepts connections and never answers a byte. At most 4 validations are checked at
     once, one per token (503 linkChecksBusy past them, before the document is validated), each
     answering by its 30 s deadline with what was not checked; the daemon's threads stay
     under 4 x 2 checks x (8 fetches + 1) + 40; the operator's publish, checked with
     fetches of its own, is answered within 10 s. Before, every validation started a check
     of 8 threads that queued for 8 shared fetches (hundreds of threads) and the publish
     waited behind them.
 29. The app's token from one IPv6 /48 behind a trusted proxy (`--trust-forwarded-for`):
     12 connections flood it for 6 s from 256 /64s of 2001:db8:77::/48 (each /64 quiet
     enough, alone), while 16 installs in other /48s post a batch every 2 s: the /48 gets at
     most four peers' shares (its /56s two each) and at least 95 % of the installs' posts
     are accepted. Before, each /64 was a peer of its own and the /48 spent the token.
 30. The unknown-links listing asked for again and again: 200 shapes close to the routes of
     a 1,000-route document, each from 3 networks, listed with limit=200 twenty times by a
     telemetry:read token. A suggestion validates a document, so one request makes at most
     20 new ones (`pending` counts the rest) and keeps them: once all are made, ten more
     listings have none pending (each would make at most 20 again). Before, every listing
     validated for all 200 shapes again.
 31. Documents in work: six publishing tokens send the documents that cost the most to
     parse (249,000 tiny routes, one route naming 249,000 params, 999,000 values) to
     validate, publish, preview and diff from 12 connections for 4 s: one is parsed at a
     time (--documents-at-once 1), so peak RSS stays under the budgets' sum (352 MB here).
     Before, every such job ran at once: 408-449 MB.
 32. Bodies left behind: four publishing tokens send 15 MiB drafts to preview from 16
     connections and reset each once its body is sent, behind slow validations: a queued
     draft's bytes stay counted in the body budget until its job lets go of it, so past
     the budget the next head is refused and peak RSS stays under the budgets' sum (352
     MB); every byte is given back once the drafts end. Before, a reset gave the bytes back
     at once while the job still held them: 400 MB.
 33. Drafts fill the reads lane: four publishing tokens, each from an address of its own,
     preview and diff 300 KB drafts from 16 connections each behind slow validations; each
     draft waits for its document turn holding a place in the costly-reads lane. A token
     holds at most 2 such documents and an address 4 (503 at the head past them), so a
     dashboard's QR codes, revision list and revision reads are answered (>= 95 %).
     Before, the tokens' shares (16 each) filled the lane's 64 places and they got 503.
 34. Many schedules due at once: a marketing token schedules 100 publishes (the most that
     may wait) of a 5,000-route document for the same second: they fire one a document
     turn, and those whose base has moved are skipped unvalidated, so another marketer's
     validations meanwhile answer within 2 s (0.07 s). Before, all 100 were validated in
     one turn: 7-8 s.
 35. Bodies behind a trusted proxy (`--trust-forwarded-for`, every connection from
     loopback): one client the proxy names begins telemetry posts declaring 1,000,000
     bytes each, then smaller ones, never ending them, until its share of the body budget
     (64 MiB) is full to within 100 bytes (the heads past it get 503); 16 installs the proxy names from other
     addresses, posting every 0.5 s for 4 s, are accepted (>= 95 %), and every byte is
     given back once the client leaves. Before, every body behind the proxy was the proxy's,
     so the one client's share was everyone's and the installs got 503.
 36. A cell of their own (the app's token): while a 30,000-install fleet on 200 networks
     rolls out a healthy candidate, 10, then 20, then 50 attacker networks each post their
     day of candidate failures and stable successes on ios 9.9.9, a build with a schema that
     nobody runs, and one more names a build with no schema: the candidate completes (a cell
     is evidence only when its stable side comes from 10 networks and a quarter of all the
     stable side's), the unregistered build's claims are refused as evidence, and a 40 %
     break on 5.3.0 beside the 50 still trips. Before, ten networks tripped any healthy
     rollout 1-7 s after posting.
 37. Forged successes on thin traffic: 60 stable installs on 20 networks and no honest
     candidate evidence; 5, then 10, then 20 attacker networks post candidate successes
     under 50 made-up source keys a round, past the step's minimum time: the step never
     advances (a healthy verdict, and a step's own evidence, need 10 networks that also
     report the stable revision). Before, 5 networks advanced 10 % to 100 %.
 38. The app's token (manifest:read and telemetry:write, shipped in every binary) asks for a
     campaign scheduled in 3 days (its message names a coupon), revisions, diffs, the
     rollout, schemas, QR codes and resolving: each is 403 naming routes:read, and nothing of
     the schedule shows; its manifest and its telemetry are answered. Before, manifest:read
     opened all of them.
 39. Bodies by network: 5,000 chunked telemetry posts of one byte each from 5, then 50
     addresses of one /24 (--max-connections 12000, 2000 a peer), then 400 posts declaring
     1,000,000 bytes begun and never ended from 5, then 50 /64s of one /48 behind a trusted
     proxy: 16 installs of other networks posting every 0.5 s are accepted (>= 95 %); a
     chunked body reserves what arrived rounded to 4 KiB (5,000 bytes hold at most 20 MiB),
     and one network's peers hold at most twice a peer's share (128 of 256 MiB). Before, a
     reservation ran 64 KiB ahead and shares were per address: the budget filled, installs
     got 503.
 40. Route names by recency: marketing publishes 10 documents of 10,000 new route ids (the
     clock moved 2 minutes between them) and a phone counts each id once, 100,000 in all;
     then a new campaign is published and opened 7 times: it counts 7 under its name (the
     ids counted least recently gave their names back). Before, the first 10,000 ids kept
     their names for good and the campaign counted as other.
 41. The largest counts answer: 480 groups counted now, then a telemetry:read token asks
     two days of minutes by six dimensions with limit=1000: 400 answerTooLarge (the groups'
     series are never made: at most 500,000 values an answer); the largest allowed (170
     groups of 2,880 minutes) peaks RSS at most 64 MB over where it was. Before, the first
     answer was 10.4 MB of JSON built as a tree, RSS 31 -> 197 MB.

 42. The biggest impact beside an operator's publish: a 2,000-pattern route with a week of
     opens, then a marketing token asks the impact of a 200,000-pattern draft (2.9 MB;
     refused 422 impactTooLarge once decoded: a replay indexes at most 40,000 patterns and
     160,000 segments a document), of the largest it may (37,900 literals beside the
     route's 2,000 `:slug` patterns, which each pass them all: refused 422 impactTooCostly
     when its work runs out) and of 3,000 routes that a replay answers; 50 ms into each an
     operator publishes: answered within a second, 3 of 3 times each (a replay leaves the
     document turn once its draft is parsed). Before, the impact ran 15-27 s in the turn and
     the publish waited for it.
 43. QR codes against followers and dashboards: 64 keep-alive connections from 4 addresses,
     each with a routes:read token of its own, ask new version-40 QR codes of a primary (the
     reads lane full: 16 a token) while it publishes 5 times: a follower polling every 0.5 s
     serves each new revision within 2 s, and a dashboard's counts are answered (>= 95 %),
     while 32 more connections of two marketing tokens (telemetry:read) ask their costliest counts
     (two days of minutes by six dimensions, 170 groups) over and over: counts run in a lane of
     their own (internal reads), revision records in another (replication). Before, a
     publish stayed off the follower for more than 15 s in 4 of 5 runs and 14/17 to 50/54
     of the counts were 503.
 44. Suggestions on a large revision: 200 suggestible shapes beside 20,000 routes of their
     length, each from 3 networks; a telemetry:read token lists them with limit=200 while a
     QR code is asked: a listing stops making suggestions at 0.2 s of CPU (one is always
     made), so the QR code is answered within a second; once all are made, a publish that
     changes no route of their length leaves them standing (the next listing has none
     pending: it would make at most 20). Before, one listing took 6.6-7.4 s of CPU, the QR code
     waited 6.3-7.1 s behind it, and every publish dropped every suggestion.
 45. A follower's token forwards what no phone could send (`POST /v1/replication/telemetry`,
     forwards written here byte for byte): 1,000 shapes counted 4,000,000,000 each; a shape
     of raw text (`/x0000/<b>call +1 555 0100</b>`); shapes past their events; 4e9 events in
     one minute (exactly 3,990,000,000 dropped), sent again as a retry (not clamped twice);
     60,000 made-up route names in one minute; a tally naming a slot its batch does not
     list; 60,001 route names in a batch; 1,000 names for one tally; 10,001 shapes; a
     forward inside a forward, three deep (refused at the first frame, never decoded
     recursively); then an honest forward of a real route and shape. What an honest follower could make past a bound is counted less what a
     phone's batches could not carry (200, `clamped` in the answer,
     waymark_telemetry_forwards_clamped_total): at most 10,000,000 events a minute, shapes
     normalised (no raw text listed) and scaled to their unknown-route events; what no
     follower makes is refused whole (400 invalidForward, refused_total). The made-up names
     count as route other (no cell is taken for them), and the honest one counts, its shape
     listed. Before, the shapes replaced every real one in the top 20 as raw text and the
     names filled the cell table.
 46. Link previews and bots: hostile preview fields (a private or script image, a bidi
     override, a 10 MB title, a 100 KB image address, an unknown member, a line break) are
     refused 422 at publishing, nothing of them echoed; hostile-but-valid text reaches a
     crawler's card escaped; 10,000 fetches from 8 connections by preview crawlers, other
     bots and HEAD (known links, random products, random unknown links) are counted as
     `bot`, and change none of what stands for people: the counts without an entry filter,
     the impact preview's opens, a running rollout's guard evidence, the unknown links.
 47. Install Referrers from hostile links: an Android visitor sent to Google Play by links
     whose UTM items carry encoded CR LF, quotes, markup, a referrer of their own, 1,900-byte
     values, 2,000 items: the Location is Play's address and one referrer item of unreserved
     bytes and escapes; decoded as Play hands it to the app it holds the link, `t` and only
     plain UTM items of at most 100 bytes. The same links from an iPhone get the hand-off
     page: one link, the App Store's (`ct` only from a plain utm_campaign), and a hand-off
     text of the link as opened and when, nothing of the query; from Instagram's and
     Facebook's browsers, Open in the app is the app's scheme or an intent:// address for
     its package, and nothing else.
 48. Deferred links' times in kept landings: with no publish or window edge ahead, the
     daemon's clock moved by --clock-file a day and more: Google Play's referrer `t` and the
     iPhone's hand-off time are never more than 30 s old (answers carrying them are kept
     30 s at most; before, they were kept until the store changed, and went stale past the
     apps' one-day bound).
 49. Hostile CSVs for the importer (`waymark import`): a quote never closed over 30 MB, a
     10 MB field, 100,000 fields in a row, 1,000,000 rows, a 70 MB file, bytes that are not
     UTF-8, a quote inside a field: each refused at once, naming its row and field, no
     document written; CR, LF and CRLF mixed with line breaks inside quotes read as RFC
     4180 says; each in seconds, the runs' peak RSS bounded.
 50. One route at a time under attack: a publishing token floods valid PUTs from 24
     connections, then during a rollout refused ones: none acknowledged is lost, another
     marketer's whole publish lands (rebased over the PUTs of other routes since its base),
     the operator's abort is answered within a second; the
     default rate holds a token (429); bodies past the limit, nested 100,000 deep, bad ids,
     batches past 1,000 or naming a route twice are refused and change nothing.
Each attack is a file of its own, attacks/NAME.py (the number above is the comment over its
function); what they share — the daemon fixture, calls, tokens, payloads — is
hostile_common.py. Prints each figure; exits 1 on the first failure.
Usage: hostile.py WAYMARK_RELEASE_BINARY [ATTACK...] (attacks by name, any of SHARED and ALONE below, e.g.
impact_flood: only those, each on a daemon of its own; `make test-hostile ONLY='impact_flood dot_versions'`)
"""
import http.client
import itertools
import json
import random
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import waymark_daemon
from waymark_daemon import call, rss_mb

from hostile_common import *  # noqa: F401,F403
from attacks.anonymous_bodies import anonymous_bodies
from attacks.flood_and_publish import flood_and_publish
from attacks.dot_versions import dot_versions
from attacks.heads_without_bodies import heads_without_bodies
from attacks.two_loop_rate import two_loop_rate
from attacks.qr_flood import qr_flood
from attacks.slow_qr_readers import slow_qr_readers
from attacks.request_ids import request_ids
from attacks.host_ports import host_ports
from attacks.private_fallbacks import private_fallbacks
from attacks.publisher_reads_counts import publisher_reads_counts
from attacks.slow_manifest_file_readers import slow_manifest_file_readers
from attacks.cell_cap import cell_cap
from attacks.silent_connections import silent_connections
from attacks.batch_ids import batch_ids
from attacks.big_documents import big_documents
from attacks.landing_past_an_edge import landing_past_an_edge
from attacks.refusals_from_many_addresses import refusals_from_many_addresses
from attacks.old_revisions import old_revisions
from attacks.impact_flood import impact_flood
from attacks.counts_beside_ingestion import counts_beside_ingestion
from attacks.vocabulary_growth import vocabulary_growth
from attacks.ended_schedules import ended_schedules
from attacks.shared_token_flood import shared_token_flood
from attacks.ipv6_network_flood import ipv6_network_flood
from attacks.mistake_reports import mistake_reports
from attacks.pipelined_small_answers import pipelined_small_answers
from attacks.changes_flood import changes_flood
from attacks.link_check_flood import link_check_flood
from attacks.suggestion_listing import suggestion_listing
from attacks.documents_in_work import documents_in_work
from attacks.bodies_after_reset import bodies_after_reset
from attacks.drafts_fill_reads import drafts_fill_reads
from attacks.many_due_schedules import many_due_schedules
from attacks.bodies_behind_proxy import bodies_behind_proxy
from attacks.guard_cells import guard_cells
from attacks.forged_advance import forged_advance
from attacks.phone_token_scope import phone_token_scope
from attacks.bodies_by_network import bodies_by_network
from attacks.route_recency import route_recency
from attacks.counts_answer_size import counts_answer_size
from attacks.impact_beside_publish import impact_beside_publish
from attacks.qr_beside_followers import qr_beside_followers
from attacks.suggestions_across_publishes import suggestions_across_publishes
from attacks.hostile_forwards import hostile_forwards
from attacks.crawler_flood import crawler_flood
from attacks.hostile_referrers import hostile_referrers
from attacks.deferred_times import deferred_times
from attacks.hostile_csvs import hostile_csvs
from attacks.route_put_flood import route_put_flood


# The attacks on one shared daemon, in order (each takes the daemon, and some the binary
# and its data directory), then those that start daemons of their own (binary, scratch).
SHARED = ["anonymous_bodies", "flood_and_publish", "dot_versions", "heads_without_bodies", "two_loop_rate", "qr_flood",
          "slow_qr_readers", "request_ids", "host_ports", "private_fallbacks", "publisher_reads_counts", "slow_manifest_file_readers",
          "crawler_flood", "hostile_referrers"]


ALONE = ["cell_cap", "silent_connections", "batch_ids", "big_documents", "landing_past_an_edge", "refusals_from_many_addresses",
         "old_revisions", "impact_flood", "counts_beside_ingestion", "vocabulary_growth", "ended_schedules", "shared_token_flood",
         "ipv6_network_flood", "mistake_reports", "pipelined_small_answers", "changes_flood", "link_check_flood", "suggestion_listing",
         "documents_in_work", "bodies_after_reset", "drafts_fill_reads", "many_due_schedules", "bodies_behind_proxy", "guard_cells",
         "forged_advance", "phone_token_scope", "bodies_by_network", "route_recency", "counts_answer_size", "impact_beside_publish",
         "qr_beside_followers", "suggestions_across_publishes", "hostile_forwards", "deferred_times", "hostile_csvs", "route_put_flood"]


def run_shared(name, daemon, binary, data):
    """One attack of the shared daemon, given what its parameters name."""
    import inspect
    attack = globals()[name]
    given = {"daemon": daemon, "binary": binary, "data": data}
    return timed(attack, *[given[parameter] for parameter in inspect.signature(attack).parameters])


def main():
    if len(sys.argv) < 2:
        fail("usage: hostile.py WAYMARK_RELEASE_BINARY [ATTACK...]")
    binary = os.path.abspath(sys.argv[1])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    chosen = sys.argv[2:]
    if chosen:
        # Attacks by name, each on a daemon of its own.
        unknown = [name for name in chosen if name not in SHARED + ALONE]
        if unknown:
            fail("no attack %s; these are: %s" % (", ".join(unknown), ", ".join(SHARED + ALONE)))
        with tempfile.TemporaryDirectory(prefix="waymark-hostile-") as scratch:
            for index, name in enumerate(chosen):
                if name in ALONE:
                    timed(globals()[name], binary, scratch)
                    continue
                data = os.path.join(scratch, "shared-%d" % index)
                daemon = Daemon(binary, data)
                try:
                    flood = run_shared(name, daemon, binary, data)
                    if not daemon.alive():
                        fail("the daemon died")
                    daemon.stop()
                    if name == "flood_and_publish":
                        audit_after_stop(data, flood)
                finally:
                    if daemon.alive():
                        daemon.process.kill()
        return
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="waymark-hostile-") as scratch:
        data = os.path.join(scratch, "main")
        daemon = Daemon(binary, data)
        try:
            flood = None
            for name in SHARED:
                answer = run_shared(name, daemon, binary, data)
                if name == "flood_and_publish":
                    flood = answer
            if not daemon.alive():
                fail("the daemon died")
            rss = rss_mb(daemon.process.pid)
            daemon.stop()
            audit_after_stop(data, flood)
            for name in ALONE:
                timed(globals()[name], binary, scratch)
        finally:
            if daemon.alive():
                daemon.process.kill()
    print("hostile: every attack survived, the first daemon at %.1f MB RSS at the end; %.0f s" % (rss, time.monotonic() - started))
    slowest = sorted(SECONDS.items(), key=lambda item: -item[1])
    print("hostile: seconds per attack, slowest first: " + ", ".join("%s %.1f" % item for item in slowest))


if __name__ == "__main__":
    main()
