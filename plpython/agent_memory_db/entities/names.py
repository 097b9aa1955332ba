"""The built-in word lists the entity extractor reads. Every name is written normalized (lower case,
as normalize_entity returns it); a caller's gazetteer extends or overrides DEFAULT_GAZETTEER.
"""

from __future__ import annotations


def _names(text: str) -> frozenset[str]:
    """A list written as comma-separated names (names may hold spaces)."""
    return frozenset(name.strip() for name in text.split(",") if name.strip())


# Developer tools, languages, databases and services (type tool), and companies and clouds (type org).
TOOLS = _names(
    """
    python, javascript, typescript, java, kotlin, scala, golang, rust, swift, ruby, php, perl, c++, c#, f#,
    objective-c, haskell, elixir, erlang, clojure, lua, dart, bash, zsh, powershell, sql, html, css, sass,
    webassembly, postgresql, mysql, mariadb, sqlite, mongodb, redis, cassandra, dynamodb, elasticsearch,
    opensearch, clickhouse, bigquery, sql server, cockroachdb, neo4j, pgvector, timescaledb, duckdb, kafka,
    rabbitmq, memcached, pinecone, qdrant, weaviate, milvus, psql, pgbouncer, react, vue, angular, svelte,
    next.js, node.js, deno, express, django, flask, fastapi, rails, ruby on rails, spring, spring boot, laravel,
    sqlalchemy, pydantic, pandas, numpy, scipy, scikit-learn, pytorch, tensorflow, keras, langchain, llamaindex,
    celery, pytest, jest, cypress, playwright, selenium, junit, webpack, vite, babel, eslint, prettier, ruff,
    mypy, black, tailwind, graphql, grpc, protobuf, openapi, jupyter, airflow, spark, hadoop, docker,
    kubernetes, helm, terraform, ansible, jenkins, github actions, gitlab ci, circleci, argo cd, prometheus,
    grafana, sentry, nginx, haproxy, envoy, istio, vault, linux, ubuntu, debian, macos, windows, ios, android,
    git, npm, yarn, pnpm, pip, poetry, conda, homebrew, vim, neovim, emacs, visual studio code, intellij,
    pycharm, xcode, postman, curl, openssl, ssh, tmux, .net, slack, jira, confluence, notion, trello, figma,
    zoom, discord, chatgpt, gpt-4, s3, ec2, firebase, excel, google docs, google sheets, gmail, outlook
    """
)
ORGS = _names(
    """
    github, gitlab, bitbucket, aws, azure, google cloud, google, microsoft, amazon, apple, meta, netflix,
    openai, anthropic, hugging face, stripe, twilio, cloudflare, vercel, netlify, heroku, digitalocean,
    atlassian, datadog, snowflake, oracle, ibm, intel, nvidia, amd, mozilla, stack overflow, linkedin,
    twitter, youtube, facebook, reddit, supabase, mistral, deepmind, salesforce, shopify, uber, airbnb, spotify
    """
)
DEFAULT_GAZETTEER = {**dict.fromkeys(TOOLS, "tool"), **dict.fromkeys(ORGS, "org")}
# Names that are also common English words: they count only when written with a capital letter
# (or in backticks): "Rust", not "rust"; "Slack", not "slack".
AMBIGUOUS = _names(
    """
    rust, swift, ruby, dart, java, bash, express, spring, flask, rails, black, poetry, windows, notion, zoom,
    discord, vault, envoy, sentry, helm, spark, jest, celery, pandas, node, torch, slack, react, angular,
    prettier, yarn, vim, babel, sass, tailwind, homebrew, playwright, selenium, airflow, pinecone, apple,
    amazon, meta, oracle, snowflake, stripe, mistral, excel, outlook, intel, uber
    """
)
# Common first names: a capitalized word among these starts a person's name.
FIRST_NAMES = _names(
    """
    mary, patricia, jennifer, linda, elizabeth, barbara, susan, jessica, sarah, karen, lisa, nancy, betty,
    margaret, sandra, ashley, kimberly, emily, donna, michelle, carol, amanda, dorothy, melissa, deborah,
    stephanie, rebecca, sharon, laura, cynthia, kathleen, amy, angela, shirley, anna, brenda, pamela, emma,
    nicole, helen, samantha, katherine, christine, debra, rachel, carolyn, janet, catherine, maria, heather,
    diane, ruth, julie, olivia, joyce, virginia, victoria, kelly, lauren, christina, joan, evelyn, judith,
    megan, andrea, cheryl, hannah, jacqueline, martha, gloria, teresa, ann, sara, madison, frances, kathryn,
    janice, jean, abigail, alice, judy, sophia, grace, denise, amber, doris, marilyn, danielle, beverly,
    isabella, theresa, diana, natalie, brittany, charlotte, marie, kayla, alexis, lori, caroline, melanie,
    gina, joanna, audrey, jolene, chloe, zoe, lucy, mia, ava, ella, lily, nora, claire, julia, sofia, ana,
    elena, fatima, aisha, priya, yuki, mei, olga, ingrid, giulia, chiara, camille, lea, ines, carmen, lucia,
    paula, rosa, sophie, emilia, hanna, anja, katya, natasha, irina, leila, sakura, ayesha, deepa, ananya,
    mariana, gabriela, valentina, isabel, beatriz, fernanda, jade, harper, avery, riley, jordan, taylor,
    morgan, casey, alex, sam, jamie, charlie, robin, kim, james, robert, john, michael, david, william,
    richard, joseph, thomas, christopher, charles, daniel, matthew, anthony, mark, donald, steven, andrew,
    paul, joshua, kenneth, kevin, brian, george, timothy, ronald, jason, edward, jeffrey, ryan, jacob, gary,
    nicholas, eric, jonathan, stephen, larry, justin, scott, brandon, benjamin, samuel, gregory, alexander,
    patrick, frank, raymond, jack, dennis, jerry, tyler, aaron, jose, adam, nathan, henry, zachary, douglas,
    peter, kyle, noah, ethan, jeremy, walter, christian, keith, roger, terry, austin, sean, gerald, carl,
    harold, dylan, arthur, lawrence, jesse, bryan, billy, bruce, gabriel, joe, logan, alan, juan, albert,
    willie, elijah, wayne, randy, vincent, liam, mason, lucas, oliver, leo, max, oscar, hugo, felix, tom, tim,
    tony, mike, dave, nate, evan, calvin, jon, bob, bill, jim, steve, chris, matt, ben, dan, nick, luis,
    carlos, miguel, javier, diego, pedro, pablo, marco, luca, matteo, giovanni, pierre, louis, hans, klaus,
    lars, sven, ivan, dmitri, sergei, mohammed, muhammad, ahmed, ali, omar, hassan, yusuf, raj, arjun, rahul,
    vikram, amit, ravi, wei, hiroshi, kenji, takeshi, jin, minho, kwame, kofi, tariq, mateo, santiago,
    andres, rafael, bruno, thiago, joao, francois, jens, erik, anders, mikhail, yuri, alexei, sanjay, anil,
    sydney, florence, chelsea, paris, dallas, phoenix
    """
)
# Countries, regions, big cities and states: a phrase among these is a place.
PLACES = _names(
    """
    usa, us, united states, america, uk, united kingdom, england, scotland, wales, ireland, canada, mexico,
    brazil, argentina, chile, colombia, peru, france, germany, spain, portugal, italy, netherlands, belgium,
    switzerland, austria, sweden, norway, denmark, finland, poland, ukraine, russia, greece, turkey, israel,
    egypt, nigeria, kenya, south africa, morocco, ethiopia, ghana, india, pakistan, bangladesh, china, japan,
    korea, south korea, vietnam, thailand, indonesia, philippines, malaysia, singapore, australia,
    new zealand, iran, iraq, saudi arabia, uae, europe, asia, africa, czech republic, hungary, romania,
    iceland, cuba, jamaica, venezuela, new york, new york city, nyc, los angeles, san francisco, seattle,
    boston, chicago, austin, denver, miami, atlanta, dallas, houston, phoenix, portland, philadelphia,
    washington, san diego, las vegas, detroit, nashville, toronto, vancouver, montreal, london, paris, berlin,
    munich, hamburg, amsterdam, brussels, madrid, barcelona, lisbon, rome, milan, vienna, zurich, geneva,
    prague, warsaw, stockholm, oslo, copenhagen, helsinki, dublin, edinburgh, athens, istanbul, moscow, kyiv,
    cairo, lagos, nairobi, cape town, johannesburg, dubai, mumbai, delhi, new delhi, bangalore, bengaluru,
    tokyo, osaka, kyoto, seoul, beijing, shanghai, hong kong, taipei, bangkok, hanoi, jakarta, manila,
    sydney, melbourne, auckland, mexico city, sao paulo, são paulo, rio de janeiro, buenos aires, bogota, bogotá, lima,
    santiago, tel aviv, jerusalem, california, texas, florida, oregon, colorado, hawaii, alaska, arizona,
    nevada, ohio, michigan, massachusetts, new jersey, silicon valley, bay area
    """
)
# A phrase ending in one of these is a place ("Fifth Avenue", "Golden Gate Bridge").
PLACE_WORDS = _names(
    """
    city, street, avenue, road, boulevard, lane, park, lake, river, mountain, mountains, county, island,
    islands, beach, bay, valley, square, bridge, airport, station, harbor, harbour, canyon, falls, forest,
    village, town, province, heights, hills
    """
)
# A phrase holding one of these is an organization ("Acme Corp", "University of Michigan").
ORG_WORDS = _names(
    """
    inc, corp, corporation, ltd, llc, gmbh, plc, foundation, university, institute, college, school, academy,
    team, labs, lab, group, company, bank, agency, association, society, council, committee, ministry,
    department, hospital, ventures, partners, technologies, studios, club, church, union
    """
)
# Small words that may join the capitalized words of one name ("Bank of America", "Ludwig van Beethoven").
CONNECTORS = _names("of, de, da, del, der, van, von, la, le, du")
HONORIFICS = _names("mr, mrs, ms, miss, mx, dr, prof, sir, madam")
# Capitalized words that are never (part of) a name: function words, greetings, common verbs that
# start a sentence, honorifics. Weekdays and months are times, not entities.
STOP_WORDS = (
    _names(
        """
        a, an, the, this, that, these, those, i, i'm, i've, i'll, i'd, me, my, mine, we, us, our, you, your, he,
        him, his, she, her, it, its, it's, they, them, their, there, here, what, which, who, whom, whose, when,
        where, why, how, and, or, but, nor, so, yet, if, then, than, because, as, at, by, for, from, in, into,
        of, on, onto, to, with, without, about, after, before, during, since, until, while, also, just, only,
        even, still, maybe, perhaps, please, thanks, thank, hi, hello, hey, yes, yeah, yep, no, nope, ok, okay,
        oh, wow, sure, great, cool, nice, well, now, today, tomorrow, yesterday, tonight, all, any, some, each,
        every, both, either, neither, none, not, do, does, did, done, be, is, are, was, were, been, am, have,
        has, had, can, could, will, would, shall, should, may, might, must, let, let's, note, see, check, use,
        make, run, try, add, remove, replace, update, fix, migrate, move, create, delete, set, get, put, tell,
        ask, ping, call, send, meet, go, went, come, look, find, keep, give, take, show, read, write, install,
        start, stop, open, close, good, bad, first, last, next, one, two, another, other, more, most, many,
        much, very, really, actually, anyway, however, though, although, sorry, congrats, congratulations,
        welcome, happy, dear, step, that's, there's, what's, here's, don't, can't, won't, didn't, isn't
        """
    )
    | HONORIFICS
    | _names(
        """
        monday, tuesday, wednesday, thursday, friday, saturday, sunday, january, february, march, april, june,
        july, august, september, sept, october, november, december
        """
    )
)
# All-capital words of logs, SQL and chat that are not names (an other all-capital word is a concept).
NOISE_ACRONYMS = _names(
    """
    error, err, warn, warning, info, debug, trace, fatal, panic, log, notice, detail, hint, statement, context,
    query, location, failed, failures, failure, fail, passed, pass, skipped, xfail, xpass, errors, ok, todo,
    fixme, note, nb, fyi, btw, imo, imho, lol, omg, asap, tbd, tba, am, pm, eta, eod, yes, no, and, or, not,
    the, is, it, select, from, where, insert, update, delete, into, values, create, table, drop, alter, join,
    on, as, by, group, order, limit, null, true, false, get, post, put, patch, id, wip, ps, re, fw, cc, tldr,
    utc, gmt, est, pst, cet
    """
)
# File name extensions that make a word a file name ("README.md", "ci.yml").
FILE_EXTENSIONS = _names(
    """
    py, pyi, ipynb, js, mjs, cjs, ts, tsx, jsx, json, jsonl, yml, yaml, toml, ini, cfg, conf, env, md, mdx,
    rst, txt, csv, tsv, sql, sh, bash, zsh, ps1, rb, go, rs, java, kt, scala, c, h, cc, cpp, hpp, cs, swift,
    php, html, htm, css, scss, xml, lock, log, tf, proto, vue, svelte, lua, dart, ex, exs, pdf, docx, xlsx,
    pptx, png, jpg, jpeg, gif, svg, zip, gz, tgz, whl, so, dll, exe, jar, parquet, sqlite, db
    """
)
# Top-level domains that make a dotted word a site ("example.com").
DOMAINS = _names("com, org, net, io, dev, ai, app, co, edu, gov, info")
