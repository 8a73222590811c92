// More hand-written prose for the corpus: blog posts, forum threads, Q&A, docs, products,
// listicles and other page kinds. Same block conventions as texts.mjs.

export const POSTS = {
  compost: {
    title: 'Moving the compost bins',
    blocks: [
      'We moved the allotment compost bins this weekend, and it went better than planned: two of us, one wheelbarrow and a borrowed fork, and the whole job was done by lunchtime on Saturday.',
      'The new spot gets morning sun and sits closer to the water butt, which matters in August when the heap dries out within days. The old corner was shaded by the hedge and never warmed up properly.',
      'Next month we will build a second bay from the old pallets behind the shed, so that one heap can rest while the other fills. If anyone has spare chicken wire, we would be glad of it.',
    ],
  },
  sourdough: {
    title: 'A year of sourdough: what I got wrong',
    blocks: [
      'Twelve months ago I mixed flour and water in a jam jar and started what I thought would be a brief lockdown hobby. A year later the starter, which my daughter named Gerald, is still alive, and I have baked something like a hundred and forty loaves. Most of them were edible. Some of them were good.',
      'This is not a recipe post. There are plenty of those, and most are better than anything I could write. Instead, here are the mistakes I made, roughly in the order I made them, in the hope that they save someone else a few dense, flat, sour bricks.',
      { h2: 'Trusting the clock instead of the dough' },
      'Every recipe gives times: four hours of bulk fermentation, twelve hours in the fridge. For months I followed them exactly and wondered why my bread was so inconsistent. The answer, obvious in hindsight, is that my kitchen is eighteen degrees in winter and twenty-six in summer, and yeast does not read recipes.',
      'What finally worked was watching the dough rather than the clock. When it has grown by about half, feels airy and has bubbles at the sides of the container, it is ready. In winter that can take seven hours.',
      { h2: 'Too much water, too soon' },
      'The photographs of open, glossy crumb that fill social media come from doughs with a lot of water in them. I jumped straight to those recipes and spent weeks trying to shape something with the consistency of pancake batter.',
      'Dropping the hydration to about 68 per cent while I learned to handle the dough made a huge difference. I have crept back up since, but only as far as my hands can manage.',
      { h2: 'Ignoring the starter' },
      'A weak starter makes weak bread. I used to feed Gerald whenever I remembered, which was not often, and then wonder why the loaves did not rise. Now he gets fed twice a day for two days before a bake, and the difference is obvious.',
      {
        ul: [
          'Feed at the same times each day.',
          'Use a straight-sided jar with a rubber band to mark the level.',
          'Use it at its peak, when it has doubled and just started to dome.',
        ],
      },
      'I still make mistakes, and I still get the occasional flat loaf. But most weeks the bread is better than anything I can buy, and Gerald is thriving.',
    ],
  },
  release: {
    title: 'Why we rewrote our sync engine',
    blocks: [
      'For the last nine months, a small team has been rewriting the part of our app that keeps your notes in sync across devices. It shipped to everyone last week. This post explains why we did it, what we changed, and what we learned along the way.',
      { h2: 'The old engine' },
      'The original sync engine was written in a hurry, five years ago, when the app had a few thousand users and most of them had one device. It worked by sending whole notes back and forth and keeping whichever copy had been changed most recently.',
      'That approach has an obvious flaw: if you edit the same note on two devices while one of them is offline, one set of changes is lost. As more people started using the app on phones, tablets and laptops at once, the complaints grew.',
      { h2: 'What we built instead' },
      'The new engine syncs changes rather than whole notes. Every edit is recorded as a small operation, and operations from different devices are merged so that nothing is lost, even when they arrive out of order.',
      { code: 'type Op = { id: string; note: string; at: number; insert?: { pos: number; text: string }; remove?: { pos: number; len: number } };' },
      'We looked at several existing libraries for this kind of merging and ended up using one of them, with a thin layer of our own on top to handle attachments and the history view.',
      { h2: 'What we learned' },
      'The hardest part was not the merging but the migration: moving millions of existing notes into the new format without anyone noticing. We ran both engines side by side for three months and compared their results before switching over.',
      'If you notice anything odd about your notes since the update, please get in touch with support. We read every message.',
    ],
  },
  trip: {
    title: 'Three days walking the coast path',
    blocks: [
      'I finally walked the northern stretch of the coast path last month, three days and about sixty kilometres from the lighthouse to the harbour town, staying in two guest houses along the way.',
      'The first day is the hardest: steep climbs out of every cove and no shop or café for the whole stretch. Carry more water than you think you need. The second day is gentler, along the top of the cliffs with views across to the islands, and the third finishes with a long beach walk into town.',
      'The path is well marked, but the signs are small and easy to miss in fog. I used the paper map and never needed the phone.',
      'Would I do it again? Without a doubt, though next time I would take four days and spend longer at the seal colony below the old fort.',
    ],
  },
};

export const FORUM = {
  title: 'Boiler loses pressure overnight – any ideas?',
  posts: [
    {
      user: 'frank_h',
      text: 'Our combi boiler has started losing pressure overnight. It is at 1.5 bar when I go to bed and down to about 0.5 by the morning, and then the heating will not come on. No visible leaks anywhere that I can find. The boiler is about eight years old and was serviced in the spring. Any ideas where to look before I call someone out?',
    },
    {
      user: 'plumbdave',
      text: 'Most common cause is the pressure relief valve letting by. Check the copper pipe that goes out through the wall near the boiler, if it is dripping or there is a damp patch outside under it, that is your culprit. Second most common is the expansion vessel losing its charge.',
    },
    { user: 'frank_h', text: 'Thanks Dave. Just checked and there is a small damp patch under the pipe outside, not dripping though. Is that something I can fix myself?' },
    {
      user: 'plumbdave',
      text: 'Replacing the valve means draining the system and working on the boiler itself, so it needs a registered engineer. But it is a cheap part and a short job. Ask them to check the expansion vessel at the same time, because a flat vessel can make the relief valve open every time the system heats up.',
    },
    {
      user: 'mrs_b',
      text: 'We had exactly the same thing last winter. It was the expansion vessel in our case, the engineer pumped it back up with a bicycle pump, which I thought was a joke at first. Cost us less than the callout fee.',
    },
    {
      user: 'frank_h',
      text: 'Update for anyone who finds this later: engineer came today, the vessel was completely flat and the relief valve was worn. Both sorted, pressure has held at 1.4 bar for two days now. Thanks all.',
    },
  ],
};

export const QA = {
  title: 'How do I read a large CSV file in chunks in Python?',
  question: [
    'I have a CSV file of about 12 GB that I need to process, but my machine only has 8 GB of memory. When I call read_csv on it the process is killed. Is there a way to read it a piece at a time and still do a group-by over the whole file?',
    { code: "import pandas as pd\ndf = pd.read_csv('events.csv')\ntotals = df.groupby('user_id')['amount'].sum()" },
  ],
  answers: [
    [
      'Pass chunksize to read_csv. It then returns an iterator of data frames instead of one frame, and you can combine partial results as you go:',
      {
        code: "import pandas as pd\n\ntotals = None\nfor chunk in pd.read_csv('events.csv', chunksize=1_000_000):\n    part = chunk.groupby('user_id')['amount'].sum()\n    totals = part if totals is None else totals.add(part, fill_value=0)",
      },
      'This works because a sum can be computed in parts and added up. For a median or another statistic that cannot be split this way, you need a different approach.',
    ],
    [
      'If you only need a few columns, pass usecols as well. On wide files this often cuts memory use by more than half, and it speeds up parsing too. Setting dtype for the columns you know also helps, since pandas otherwise guesses and often picks 64-bit types.',
    ],
    [
      'For this size of data it may be worth looking at a tool that works out of core. DuckDB can run the group-by directly on the CSV file without loading it into memory, and it is usually much faster than looping over chunks.',
      { code: 'import duckdb\nduckdb.sql("SELECT user_id, sum(amount) FROM \'events.csv\' GROUP BY user_id").df()' },
    ],
  ],
  comments: [
    'Thanks, chunksize did the trick.',
    'Worth mentioning that add() with fill_value keeps users that only appear in some chunks.',
    'DuckDB was about ten times faster for me on a similar file.',
  ],
};

export const DOCS = {
  config: {
    title: 'Configuration',
    blocks: [
      'The server reads its configuration from a YAML file at startup. By default it looks for config.yaml in the working directory; pass --config to use another path.',
      { h2: 'Minimal example' },
      { code: 'listen: 0.0.0.0:8080\nstorage:\n  path: /var/lib/app\n  max_size: 10GiB\nlog:\n  level: info' },
      { h2: 'Options' },
      {
        table: [
          ['Key', 'Default', 'Description'],
          ['listen', '127.0.0.1:8080', 'Address and port the server binds to.'],
          ['storage.path', './data', 'Directory for stored objects.'],
          ['storage.max_size', 'unlimited', 'Upper bound on the total size of stored objects.'],
          ['log.level', 'info', 'One of debug, info, warn and error.'],
        ],
      },
      { h3: 'Environment variables' },
      'Every option can also be set through an environment variable named after its key, in upper case, with dots replaced by underscores and an APP_ prefix: APP_STORAGE_PATH for storage.path. Environment variables take precedence over the file.',
      { h2: 'Reloading' },
      'Send SIGHUP to the process to reload the file without a restart. Only the log level and the storage limit are reloaded; a change to listen needs a restart.',
    ],
  },
  install: {
    title: 'Installing on Linux',
    blocks: [
      'Packages are published for Debian, Ubuntu and Fedora. On other distributions, use the static binary from the releases page.',
      { h2: 'Debian and Ubuntu' },
      {
        code: 'curl -fsSL https://packages.example.org/key.asc | sudo tee /etc/apt/keyrings/example.asc\necho "deb [signed-by=/etc/apt/keyrings/example.asc] https://packages.example.org/apt stable main" | sudo tee /etc/apt/sources.list.d/example.list\nsudo apt update && sudo apt install example',
      },
      { h2: 'Fedora' },
      { code: 'sudo dnf config-manager --add-repo https://packages.example.org/rpm/example.repo\nsudo dnf install example' },
      { h2: 'Checking the installation' },
      'Run example --version. If the command is not found, make sure /usr/local/bin is on your PATH, or log out and back in so that your shell picks up the new PATH.',
    ],
  },
  api: {
    title: 'Client.upload()',
    blocks: [
      'Uploads a file to a bucket and returns the stored object’s metadata.',
      { code: 'client.upload(bucket: str, key: str, data: bytes | BinaryIO, *, content_type: str | None = None, overwrite: bool = False) -> ObjectInfo' },
      { h2: 'Parameters' },
      {
        ul: [
          'bucket: name of an existing bucket.',
          'key: the object’s key, up to 1024 bytes of UTF-8.',
          'data: the content, as bytes or an open binary file.',
          'content_type: stored with the object and sent back on download; guessed from the key when omitted.',
          'overwrite: replace an existing object with the same key instead of raising ObjectExists.',
        ],
      },
      { h2: 'Raises' },
      {
        ul: [
          'BucketNotFound if the bucket does not exist.',
          'ObjectExists if the key is taken and overwrite is false.',
          'QuotaExceeded if the upload would take the account over its storage quota.',
        ],
      },
      { h2: 'Example' },
      { code: "with open('report.pdf', 'rb') as f:\n    info = client.upload('reports', '2024/q3.pdf', f)\nprint(info.size, info.etag)" },
    ],
  },
  faq: {
    title: 'Frequently asked questions',
    qa: [
      [
        'Can I change my plan later?',
        'Yes. You can move to a larger or smaller plan at any time from the billing page. The change takes effect at once and the price is adjusted for the rest of the month.',
      ],
      ['Do you offer discounts for charities?', 'Registered charities and schools get half off any plan. Write to us from your organisation’s address with proof of status.'],
      ['Where is my data stored?', 'In two data centres in the European Union. Backups are kept for thirty days and are encrypted.'],
      [
        'How do I cancel?',
        'Open the billing page and choose cancel. Your account stays active until the end of the period you have paid for, and you can export your data at any time before then.',
      ],
    ],
  },
  changelog: {
    title: 'Release notes',
    blocks: [
      { h2: 'Version 4.2.0' },
      {
        ul: [
          'Added support for importing calendars in the iCalendar format.',
          'The search box now matches words in attachments.',
          'Fixed a crash when opening a note with a very long title.',
          'Improved start-up time on older phones by about a third.',
        ],
      },
      { h2: 'Version 4.1.3' },
      {
        ul: [
          'Fixed sync getting stuck after a device had been offline for more than a week.',
          'Fixed dates in reminders showing in the wrong time zone after a daylight saving change.',
        ],
      },
      { h2: 'Version 4.1.0' },
      {
        ul: [
          'New dark theme that follows the system setting.',
          'Notes can now be pinned to the top of a folder.',
          'Removed the legacy export format; use the JSON export instead.',
        ],
      },
    ],
  },
  short: {
    title: 'Rate limits',
    blocks: [
      'Each API key may make 600 requests per minute. Requests over the limit are answered with status 429 and a Retry-After header giving the number of seconds to wait before trying again.',
    ],
  },
};

export const PRODUCTS = {
  kettle: {
    title: 'Stainless steel kettle, 1.7 litres',
    blocks: [
      'A quiet, fast kettle with a brushed steel body and a window on both sides so you can see the water level from either hand. Boils a full jug in about four minutes.',
      { ul: ['Capacity: 1.7 litres', 'Power: 3000 W', 'Removable, washable limescale filter', 'Auto shut-off and boil-dry protection', '360° base with cord storage'] },
      'The lid opens with a button and stays open at an angle, which makes filling from a low tap easier. The handle stays cool.',
    ],
  },
  boots: {
    title: 'Trail hiking boots, waterproof',
    blocks: [
      'Lightweight hiking boots with a waterproof membrane and a grippy rubber sole for mixed terrain. Built on a wider last for comfort on long days.',
      {
        table: [
          ['Weight', '540 g per boot'],
          ['Upper', 'Suede and recycled polyester'],
          ['Sole', 'Rubber, 4 mm lugs'],
          ['Drop', '12 mm'],
        ],
      },
      'Break them in on short walks before taking them on a long route.',
    ],
  },
};

export const REVIEWS = [
  'Does exactly what it says. Quiet, quick and the filter is easy to clean.',
  'Lovely design but the lid button is a bit stiff.',
  'Bought as a replacement for one that lasted ten years. Hoping this does the same.',
  'Arrived quickly, well packaged. Five stars.',
  'The water window is handy but it gets stained after a few weeks in a hard water area.',
];

export const LISTICLE = {
  title: 'Ten houseplants that are almost impossible to kill',
  intro:
    'Not everyone has green fingers. If your windowsill is a graveyard of good intentions, these plants will put up with low light, missed waterings and the occasional holiday.',
  items: [
    ['Snake plant', 'Thick, upright leaves that store water, so it copes with weeks of neglect. Happy in a dim corner, though it grows faster in brighter light.'],
    ['ZZ plant', 'Glossy leaves and a root system that holds water like a camel. Water once a month and otherwise leave it alone.'],
    ['Pothos', 'A trailing vine that tells you when it is thirsty by drooping, then perks up within hours of a drink. Cuttings root in a glass of water.'],
    ['Spider plant', 'Tolerant of most conditions and produces baby plants on long stems that can be potted up and given away.'],
    ['Cast iron plant', 'The name says it all. It survives deep shade, cold rooms and irregular care.'],
    ['Peace lily', 'Another plant that droops dramatically when it needs water. Flowers best in medium light.'],
    ['Jade plant', 'A succulent that wants sun and very little water. Overwatering is the only real way to kill it.'],
    ['Chinese evergreen', 'Patterned leaves in green, silver and pink, and happy in low light and dry air.'],
    ['Rubber plant', 'Large, dark leaves and steady growth. Wipe the leaves now and then to keep them glossy.'],
    ['Aloe vera', 'Needs a bright window and a gritty compost, and should be left to dry out completely between waterings.'],
  ],
};

export const RECIPE = {
  title: 'Plum and almond cake',
  story: [
    'This is the cake my aunt made every September when the plum tree in her garden went mad and everyone in the family went home with bags of fruit. It is not fancy, but it is the best thing I know to do with a glut of plums.',
    'The batter is simple and very forgiving. You can swap the plums for apricots or apples, and the almonds for hazelnuts.',
  ],
  ingredients: [
    '175 g butter, softened',
    '175 g caster sugar',
    '3 eggs',
    '100 g self-raising flour',
    '100 g ground almonds',
    '1 tsp baking powder',
    '8 ripe plums, halved and stoned',
    '2 tbsp flaked almonds',
  ],
  steps: [
    'Heat the oven to 180°C and line a 23 cm round tin with baking paper.',
    'Beat the butter and sugar until pale, then beat in the eggs one at a time.',
    'Fold in the flour, ground almonds and baking powder, and spread the batter in the tin.',
    'Press the plum halves into the batter, cut side up, and scatter over the flaked almonds.',
    'Bake for 45 to 50 minutes, until a skewer comes out clean. Cool in the tin for ten minutes.',
  ],
};

export const WIKI = {
  title: 'Millbrook Valley Railway',
  blocks: [
    'The Millbrook Valley Railway is a standard gauge branch line running for nine miles between Millbrook and the junction at Ashworth. Opened in 1871 to carry stone from the quarries at its upper end, it closed to passengers in 2013 and reopened in 2024 after restoration by a volunteer society.',
    { h2: 'History' },
    'The line was built by the Millbrook Quarry Company, which needed a cheaper way than the turnpike road to move stone to the main line. Passenger services began two years later. Stone traffic ended in 1968, but the passenger service continued under several operators.',
    'In January 2013 a landslip destroyed a section of embankment near the old quarry, and the operator withdrew services. The Millbrook Valley Railway Society was formed in 2014 and acquired the line in 2016.',
    { h2: 'Route' },
    'From Millbrook the line descends along the north side of the valley, crossing the river twice, before joining the main line at Ashworth. Intermediate stations are at Carrow Halt and Fenwick.',
    { h2: 'Rolling stock' },
    'Regular services are operated by two diesel multiple units bought from a main-line operator in 2021. Heritage services at weekends use a tank engine restored by the society.',
  ],
};

export const PRESS = {
  title: 'Harbour Logistics opens solar-powered warehouse',
  blocks: [
    'PORTSIDE, 14 March — Harbour Logistics today opened its new warehouse at the eastern docks, the first building of its size in the region to run entirely on electricity generated on its own roof.',
    'The 24,000 square metre warehouse has 9,800 solar panels and a battery store that covers its needs through the night. Surplus power is sold to the grid.',
    '“Our customers asked us to cut the emissions of their supply chains, and this is the biggest single step we could take,” said chief executive Laura Chen.',
    { h3: 'About Harbour Logistics' },
    'Harbour Logistics provides storage and distribution services from six sites and employs 1,200 people.',
    { h3: 'Media contact' },
    'press@harbour-logistics.example, +44 20 7946 0000',
  ],
};

export const GOV = {
  title: 'Apply for a parking permit',
  blocks: [
    'You can apply for a residents’ parking permit if you live in a controlled parking zone and your vehicle is registered at your address.',
    'A permit costs 80 for a year. Permits for electric vehicles are free.',
    { h2: 'What you need' },
    { ul: ['your vehicle registration number', 'proof of address, such as a council tax bill from the last three months', 'a debit or credit card'] },
    { h2: 'After you apply' },
    'Your permit is digital. It is active as soon as your application is approved, usually within two working days. You do not need to display anything in your car.',
  ],
};

export const JOB = {
  title: 'Senior Backend Engineer (Payments)',
  blocks: [
    'We are looking for a senior backend engineer to join the payments team, which builds the systems that move about two billion a year between our customers and their suppliers.',
    { h2: 'What you will do' },
    { ul: ['Design and build services for payment routing and reconciliation.', 'Work with the risk team on fraud detection.', 'Help the team improve its on-call practices.'] },
    { h2: 'What we are looking for' },
    {
      ul: [
        'Several years of experience building backend services in a typed language.',
        'Experience with relational databases and message queues.',
        'Clear written communication.',
      ],
    },
    'The role is remote within the EU, with a team meeting in person once a quarter.',
  ],
};

export const PODCAST = {
  title: 'Episode 112: The people who map the sea floor',
  blocks: [
    'Less than a third of the ocean floor has been mapped in detail. This week we talk to a hydrographer who spends six months a year at sea, and to the engineer building uncrewed boats that could finish the job.',
    { h2: 'In this episode' },
    {
      ul: [
        '00:02 Why the sea floor matters for cables, fisheries and tsunami warnings',
        '00:15 A day on a survey ship',
        '00:31 Uncrewed boats and what they cannot do yet',
        '00:48 Who owns the data',
      ],
    },
    'Our guests were speaking in a personal capacity.',
  ],
};

// A Q&A page in Portuguese (a local Q&A site's own software): its meta rows are marked by <time>
// and ISO timestamps in titles, never named (twenty-first session).
export const QA_PT = {
  title: 'Como ler um arquivo CSV grande em partes com Python?',
  question: [
    'Tenho um arquivo CSV de cerca de 12 GB para processar, mas a minha máquina só tem 8 GB de memória. Quando chamo read_csv o processo é encerrado pelo sistema. Há como ler o arquivo aos poucos e ainda assim somar os valores por cliente no arquivo inteiro?',
  ],
  answers: [
    [
      'Use o parâmetro chunksize do read_csv. Com ele a função devolve um iterador de pedaços em vez de um único data frame, e você vai somando os resultados parciais à medida que lê cada pedaço do arquivo.',
      'Isso funciona porque uma soma pode ser calculada em partes e depois juntada. Para a mediana ou outra estatística que não se decompõe assim, é preciso outra abordagem.',
    ],
    [
      'Se você só precisa de algumas colunas, passe também usecols. Em arquivos largos isso costuma reduzir o uso de memória pela metade, e a leitura fica mais rápida. Definir o dtype das colunas conhecidas também ajuda bastante.',
    ],
    [
      'Para esse volume de dados vale a pena olhar para uma ferramenta que trabalha fora da memória. O DuckDB faz o agrupamento diretamente sobre o arquivo CSV, sem carregá-lo, e em geral é muito mais rápido do que um laço sobre os pedaços.',
    ],
  ],
};
