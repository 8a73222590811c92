# SPDX-License-Identifier: AGPL-3.0-or-later
"""
Drael fixture engine (local and CI only).

Queries a corpus served by infra/searx/fixture-server on 127.0.0.1. Stock json_engine cannot pass
searx's time_range or language to its upstream and cannot read a published date, so it could not
exercise freshness or page_age; this engine is json_engine plus exactly those two things.
Loaded by absolute path from the generated settings (`engine: /abs/path/drael_fixture`).
"""

from datetime import datetime
from urllib.parse import urlencode

# searx skips an engine without time_range_support whenever a time range is asked for.
time_range_support = True
paging = False
categories = ['general']

# set per engine in settings.yml: http://127.0.0.1:PORT/<corpus>
base_url = ''


def request(query, params):
    args = {'q': query}
    if params.get('time_range'):
        args['time_range'] = params['time_range']
    if params.get('language') and params['language'] != 'all':
        args['language'] = params['language']
    params['url'] = base_url.rstrip('/') + '/search?' + urlencode(args)
    return params


def response(resp):
    results = []
    for item in resp.json().get('results', []):
        result = {'url': item['url'], 'title': item['title'], 'content': item.get('content', '')}
        published = item.get('published')
        if published:
            # Python 3.11's fromisoformat reads the trailing Z the fixture server writes.
            result['publishedDate'] = datetime.fromisoformat(published.replace('Z', '+00:00'))
        results.append(result)
    return results
