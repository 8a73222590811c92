// Prose for the extraction corpus, written by hand for it (no page was copied). Articles are
// lists of blocks: a string is a paragraph, {h2}/{h3} a subheading, {ul}/{ol} a list, {quote} a
// block quote, {code} a code block, {table} rows of cells, {caption} a figure's caption.

export const ARTICLES = {
  bridge: {
    title: 'Northern bridge reopens after three weeks of repairs',
    blocks: [
      'The northern bridge reopened to traffic on Monday morning after three weeks of repairs to its expansion joints. Engineers found the corrosion worse than expected, the city said, but the work was finished two days ahead of schedule.',
      'Buses return to their usual route from Tuesday, and the temporary ferry between the two quays stops running at the end of the week.',
    ],
  },
  council: {
    title: 'Council approves budget with cuts to library hours',
    blocks: [
      'The city council approved next year’s budget late on Tuesday by 27 votes to 22, after a six-hour debate that ran well past midnight and was interrupted twice by protesters in the public gallery.',
      'The budget holds council tax flat for a second year but trims opening hours at nine of the city’s fourteen branch libraries, saving an estimated 1.3 million over twelve months. The central library keeps its hours.',
      'Opposition members said the cuts fell hardest on neighbourhoods where residents rely on libraries for internet access and help with benefit applications. “We are closing the door on the people who need it most,” said councillor Maria Okafor.',
      'The finance chair, Daniel Reeve, said the alternative was a cut to road maintenance that the city could not afford after two hard winters. He promised a review of library use in the spring.',
      'Unions representing library staff said no jobs would be lost under the plan, but that vacancies would not be filled.',
    ],
  },
  heatwave: {
    title: 'Hospitals prepare for the third heatwave of the summer',
    blocks: [
      'Hospitals across the region have cancelled routine operations for the rest of the week as forecasters warned that temperatures could pass 38 degrees on Thursday, the third heatwave of a summer that has already broken records.',
      'Health officials asked people to check on elderly neighbours, to keep curtains closed during the day and to avoid travel in the afternoon. Cooling centres will open in twelve libraries and sports halls from Wednesday.',
      { h2: 'Pressure on emergency departments' },
      'Emergency departments reported a rise of about a fifth in attendances during the last heatwave, mostly older patients with dehydration and people with heart and lung conditions whose symptoms had worsened.',
      '“The heat itself is only part of it,” said Dr Ines Varga, who leads the emergency department at the university hospital. “Nights that never cool down are what wear people out, and those are becoming more common.”',
      'Ambulance services said response times had lengthened because crews were spending longer handing patients over at crowded hospitals.',
      { h2: 'Water restrictions' },
      'The water company said reservoir levels stood at 61 per cent, lower than usual for the time of year but not yet low enough for a hosepipe ban. It asked customers to water gardens in the evening and to report leaks.',
      'Farmers said the dry weather had cut the yield of some crops by as much as a third, and that irrigation licences were already being restricted on two rivers.',
    ],
  },
  rail: {
    title: 'The long road back for the valley railway',
    blocks: [
      'On a grey morning in March, the first train in eleven years pulled out of Millbrook station with a brass band on the platform and a queue of people who had taken the day off work to ride it. For the volunteers who had spent a decade rebuilding the line, it was a quiet moment amid the noise.',
      '“I kept thinking about the bits nobody will ever see,” said Hannah Lowe, who joined the restoration society as a teenager and now chairs it. “The drainage, the culverts, the thousand sleepers we replaced by hand. None of that makes a photograph.”',
      { h2: 'A line written off' },
      'The valley railway closed in 2013 after a landslip took out a section of embankment near the old quarry. The operator judged the repair too expensive for a line carrying fewer than two hundred passengers a day, and the track was left to rust.',
      'Within a year, a group of residents had formed a society to buy the line. They raised the first money through bake sales and sponsored walks, then through a share offer that drew investors from as far away as Canada and New Zealand.',
      { quote: 'Everyone told us it could not be done. The only people who believed it were the ones who had grown up hearing the trains.' },
      'The embankment alone took four years. Engineers drove steel piles into the hillside and built a new drainage system to carry water away from the slope, which had been saturated by a spring that nobody had mapped.',
      { h2: 'Money, and patience' },
      'The society has spent about 6.4 million pounds so far, roughly half of it from grants and the rest from members, donations and the share offer. Its accounts show a small surplus from the heritage services it began running at weekends in 2019.',
      'The new timetable offers six return trips a day, timed to connect with the mainline service at the junction. The society hopes the line will carry 80,000 passengers in its first full year, many of them commuters rather than tourists.',
      { h3: 'What comes next' },
      'An extension to the village of Carrow, closed since the 1960s, is in the planning stage. It would add three miles of track and a new station next to the secondary school, and the society says it would be cheaper than the embankment repair.',
      'Not everyone is convinced. Some residents worry about noise and about the level crossing on the main road, which will close for two minutes every time a train passes. The society has promised a public meeting before it applies for permission.',
      'For now, the volunteers are enjoying the trains. On the return journey that first morning, Lowe stood at the open window of the last carriage and watched the embankment go by. “Eleven years,” she said. “It was worth every one.”',
    ],
  },
  chip: {
    title: 'Chipmaker delays new factory as demand cools',
    blocks: [
      'The chipmaker said on Thursday that it would delay the opening of its new factory by at least eighteen months, citing weaker demand for memory chips used in phones and laptops and the rising cost of equipment.',
      'The plant, announced two years ago with support from the national government, was due to start production next spring and employ about 1,400 people. The company said construction would continue at a slower pace and that no jobs would be cut at its existing sites.',
      'Shares fell 4 per cent in early trading. Analysts said the decision reflected a glut of memory chips that has pushed prices down by nearly a third since the start of the year.',
      '“This is a cyclical business, and they are being careful with cash,” said one analyst. “The question is whether the subsidy terms allow a delay of this length.”',
      'The ministry of industry said it was in talks with the company and expected the project to go ahead.',
    ],
  },
  election: {
    title: 'Polls open in a tight regional election',
    blocks: [
      'Voters in the eastern region go to the polls on Sunday in an election that surveys suggest is too close to call, with the governing centre-right alliance and the green-left coalition separated by less than two points.',
      'The campaign has been dominated by housing costs and by a dispute over the future of the region’s coal power station, which the coalition wants to close by 2030 and the alliance wants to keep open until a replacement is built.',
      'Turnout is expected to be high: more than a quarter of registered voters had already cast postal ballots by Friday, a record for a regional election.',
      'Polling stations close at 6 pm, and the first projections are expected shortly afterwards.',
    ],
  },
  museum: {
    title: 'Museum returns carved panels to their village',
    blocks: [
      'Six carved wooden panels taken from a village church more than a century ago were handed back on Saturday in a ceremony attended by hundreds of residents, some of whom had travelled from the capital.',
      'The panels, which show scenes from the life of a local saint, were bought by a collector in 1911 and given to the museum by his family in the 1950s. Researchers at the museum established three years ago that they had been removed without the consent of the parish.',
      'The museum’s director said the return was “not an act of generosity but a correction”. The panels will be reinstalled in the church after restoration work on the wall where they hung.',
    ],
  },
  storm: {
    title: 'Storm leaves thousands without power',
    blocks: [
      'More than 40,000 homes were without power on Wednesday evening after a storm brought gusts of up to 110 km/h to the coast, bringing down trees and power lines across three counties.',
      'The electricity network operator said most customers would be reconnected by Thursday night but warned that some rural properties could wait until the weekend. Engineers from other regions were being sent to help.',
      'Several roads were closed by fallen trees, and ferry services to the islands were cancelled for the rest of the day. No serious injuries were reported.',
    ],
  },
  football: {
    title: 'Late penalty sends City into the cup final',
    blocks: [
      'A penalty in the fourth minute of stoppage time sent City into the cup final on Saturday after a semi-final that had looked certain to go to extra time.',
      'Rovers had led through an early header from their captain and defended deep for most of the second half, but City equalised with twenty minutes left when a low cross was turned in at the near post.',
      'The winner came after a video review found that a defender had handled the ball in the area. The striker sent the goalkeeper the wrong way and ran to the away end, where several thousand supporters had waited through a long delay.',
      'Rovers’ manager said afterwards that the decision was “technically correct and completely cruel”. City will play the holders in the final next month.',
    ],
  },
  science: {
    title: 'Astronomers find water vapour around a small rocky planet',
    blocks: [
      'A team of astronomers has detected water vapour in the atmosphere of a rocky planet slightly larger than Earth, orbiting a red dwarf star about 48 light years away. It is the smallest planet on which water vapour has been found so far.',
      'The planet orbits close to its star and is far too hot for liquid water on its surface, the researchers said. But the finding shows that small rocky worlds around red dwarfs, the most common stars in the galaxy, can hold on to their atmospheres despite the intense radiation of their stars, which many astronomers had doubted.',
      { h2: 'How it was done' },
      'The team observed the planet as it passed in front of its star four times. During each transit, a little of the starlight passes through the planet’s atmosphere, and molecules in it absorb light at particular wavelengths.',
      'By comparing the starlight during and outside the transits, the researchers could pick out the signature of water. They say the signal is strong enough to rule out a false detection caused by starspots, a common problem with red dwarfs.',
      { quote: 'We have been waiting for this kind of measurement for a long time. It opens the door to studying many more of these worlds.' },
      'Other astronomers welcomed the result but urged caution. “Starspots have fooled us before,” said one researcher who was not involved in the study. “I would like to see it confirmed with a second instrument.”',
      'The team has been granted more observing time next year to look for carbon dioxide and methane.',
    ],
  },
  housing: {
    title: 'Rents rise fastest in a decade, survey finds',
    blocks: [
      'Rents for new tenancies rose by 9.2 per cent in the year to September, the fastest rate in a decade, according to a survey of letting agents published on Monday.',
      'The survey found that demand from tenants had outstripped the supply of homes to let in every region, with the gap widest in university towns and in commuter belts around the largest cities.',
      {
        table: [
          ['Region', 'Annual change'],
          ['North', '7.4%'],
          ['Midlands', '8.8%'],
          ['South', '9.9%'],
          ['Capital', '11.2%'],
        ],
      },
      'Landlords cited higher mortgage costs and new energy efficiency rules as reasons for leaving the market. The number of properties listed for rent was 14 per cent lower than a year earlier.',
      'Tenant groups called for limits on rent increases within tenancies, which the government has so far ruled out.',
    ],
  },
  obituary: {
    title: 'Agnes Holm, teacher who founded the town choir, dies at 91',
    blocks: [
      'Agnes Holm, who taught music at the town’s secondary school for 34 years and founded the community choir that still rehearses in the old corn exchange, has died at the age of 91.',
      'Born on a farm outside the town in 1933, she won a scholarship to the conservatoire and sang professionally for several years before returning home to teach. Generations of pupils remember her insistence that anyone could sing, and her refusal to accept that they could not.',
      'The choir she founded in 1971 with eleven members now has more than eighty. It will sing at her funeral on Friday.',
      'She is survived by her son, two grandchildren and a great-grandson.',
    ],
  },
  wire: {
    title: 'Quake shakes coastal towns; no damage reported',
    blocks: [
      'PORT ELLEN (AP) — A moderate earthquake shook coastal towns on Tuesday afternoon, rattling windows and sending some residents into the streets, but there were no immediate reports of damage or injuries.',
      'The geological survey said the quake had a magnitude of 5.1 and was centred about 30 kilometres offshore at a depth of 12 kilometres. It was followed by two smaller aftershocks.',
      'Local officials said schools would open as usual on Wednesday after inspections of their buildings overnight.',
      'Associated Press writer Tom Briggs contributed to this report.',
    ],
  },
  transit: {
    title: 'Free bus travel for under-22s to start in January',
    blocks: [
      'Young people under the age of 22 will be able to travel free on buses across the region from January, the transport authority announced on Friday.',
      'The scheme, which will cost about 18 million a year, is paid for by a levy on workplace parking. Passes will be issued through schools and colleges and can also be ordered online from next month.',
      'Bus operators welcomed the scheme but said they would need more drivers to cope with extra demand at peak times.',
    ],
  },
};

// Short standfirsts and headlines for the teasers, rails and "more news" blocks around articles.
export const HEADLINES = [
  'Regional transport authority reviews its winter timetable',
  'Five things to know before the new parking rules start',
  'Police appeal for witnesses after late-night crash on ring road',
  'School meals provider loses contract after inspection',
  'Opinion: the high street is not dead, it is changing',
  'Weather: cold snap expected to last until the weekend',
  'Local brewery wins national award for its stout',
  'How much is your council tax going up this year?',
  'Watch: rescue crews free a horse stuck in a river bank',
  'Pensioners queue for hours at the new passport office',
  'The best walks in the hills this autumn, chosen by readers',
  'Hospital car park charges to rise from April',
  'Fire at recycling plant under control after two days',
  'Why the price of heating oil has fallen again',
  'Teenager’s app helps blind users find bus stops',
  'Planning inspector backs controversial housing estate',
  'Five arrested after raids on illegal tobacco shops',
  'Quiz: how well do you know the city’s history?',
  'Bakery owner marks fifty years behind the counter',
  'Motorway junction to close for a month of overnight repairs',
  'University to cut courses as student numbers fall',
  'New cycle lane divides residents on the seafront',
  'In pictures: the harvest festival through the years',
  'Man jailed for stealing lead from church roofs',
  'Airport passenger numbers back to pre-pandemic levels',
  'Zoo welcomes the birth of two red panda cubs',
  'Energy firm fined over misleading bills',
  'Tributes paid to former mayor who served three terms',
  'Markets: shares edge higher as oil prices steady',
  'Recipe: a simple plum cake for a rainy afternoon',
  'Council to review street lighting after complaints',
  'Flood defences finished a year late and over budget',
  'Live: updates from the transport strike',
  'Video: the moment a crane collapsed at the docks',
  'Ferry operator adds winter sailings to the islands',
  'Care homes warn of staff shortages this winter',
  'Theatre reopens after a two-year restoration',
  'Your letters: on bins, buses and the new bypass',
  'Cricket club celebrates its first league title in forty years',
  'Tech firms face new rules on children’s data',
];

export const STANDFIRSTS = [
  'The authority says changes to the timetable are needed to cope with a shortage of drivers over the winter months.',
  'Residents have until the end of the month to respond to the consultation, which closes on the 30th.',
  'The company said it was disappointed by the decision and would consider an appeal in the coming weeks.',
  'Forecasters say temperatures will drop below freezing overnight in most areas, with frost on higher ground.',
  'Campaigners said the plans would put more traffic on roads that were already at capacity at rush hour.',
  'Officers were called to the scene shortly after midnight and the road remained closed for several hours.',
  'The figures, published on Thursday, show the largest annual increase since records began in their current form.',
  'Organisers said more than ten thousand people attended over the weekend despite the rain.',
  'The scheme will be reviewed after six months, and could be extended to other parts of the county.',
  'A spokesperson said the firm was cooperating fully with the investigation and could not comment further.',
  'Parents said they had been given only a week’s notice of the changes to the school day.',
  'The decision follows a long campaign by residents, who collected more than four thousand signatures.',
];

// Reader comments, in the tone comment sections have.
export const COMMENTS = [
  'Great article, thanks for writing this up. I have been wondering about this for a while.',
  'I disagree with the second point. In my experience it depends a lot on where you live and what your budget is.',
  'We tried exactly this last year and it worked well for the first few months, then everything fell apart when the weather turned.',
  'Does anyone know whether the same rules apply to people who rent rather than own? The article does not say.',
  'This is the third time this year they have changed their minds. Nobody is accountable for anything any more.',
  'Thank you! The part about drainage was really useful, we had the same problem and never worked out the cause.',
  'Would love to see a follow-up in a year’s time to see how it all turned out.',
  'My grandfather worked on the original line and used to tell stories about the winters up there. Lovely to see it back.',
  'Not sure the numbers add up. Eighty thousand passengers a year is a lot for a branch line.',
  'Agree with the previous commenter, the photos would have helped a lot.',
  'I have been reading this blog for years and this is one of the best posts yet. Keep them coming.',
  'Quick question: did you use treated timber for the frame or just plain pine?',
  'We did something similar but used bricks instead of pallets. Took longer but it will outlast us.',
  'Reported this to the council three times and nothing happened until the newspaper got involved.',
  'Interesting, though I think the headline oversells it a little.',
  'Just signed up to the newsletter after reading this. Very clear explanation, thank you.',
  'Has anyone had problems with the new version on older phones? Mine crashes on start-up.',
  'The comments here are better than the article, honestly.',
  'Same experience here. Took three emails and a phone call to get a straight answer.',
  'Saved this for later. The list at the end is exactly what I needed.',
];

export const COMMENT_NAMES = [
  'mike_r',
  'Sarah K.',
  'old_engine_driver',
  'Priya',
  'Tom from Leeds',
  'gardenerjo',
  'anon',
  'B. Martins',
  'kestrel42',
  'Liz',
  'DaveS',
  'northern_lights',
  'Chen W.',
  'Ruth',
  'pj_harvey_fan',
];

// Non-English articles.
export const FOREIGN = {
  de: {
    title: 'Stadtrat beschließt neues Radwegenetz',
    blocks: [
      'Der Stadtrat hat am Donnerstagabend mit großer Mehrheit ein neues Radwegenetz beschlossen. Bis 2030 sollen 42 Kilometer geschützte Radwege entstehen, vor allem auf den großen Ausfallstraßen.',
      'Die Kosten werden auf rund 58 Millionen Euro geschätzt, von denen das Land etwa die Hälfte übernehmen will. Für den Bau müssen an mehreren Straßen Parkplätze wegfallen.',
      'Der Einzelhandelsverband kritisierte den Beschluss. Viele Kunden kämen weiterhin mit dem Auto in die Innenstadt, sagte ein Sprecher.',
    ],
  },
  fr: {
    title: 'La ville rouvre son théâtre après deux ans de travaux',
    blocks: [
      'Après deux ans de travaux, le théâtre municipal a rouvert ses portes samedi soir devant une salle comble. La restauration a permis de retrouver les peintures du plafond, cachées depuis les années 1950 sous plusieurs couches de peinture blanche.',
      'Le chantier a coûté 14 millions d’euros, financés par la ville, la région et un appel aux dons qui a réuni plus de trois mille donateurs.',
      { h2: 'Une programmation ouverte' },
      'La nouvelle direction veut attirer un public plus jeune. La saison mêle théâtre classique, danse contemporaine et concerts, avec des places à dix euros pour les moins de vingt-cinq ans.',
      '« Ce théâtre appartient aux habitants, pas seulement aux abonnés », a déclaré la directrice lors de l’inauguration. Des visites guidées gratuites seront proposées chaque premier dimanche du mois.',
      'Les travaux ont aussi permis de rendre la salle accessible aux personnes en fauteuil roulant, ce qui n’était pas le cas auparavant.',
    ],
  },
  es: {
    title: 'El Gobierno aprueba el plan contra la sequía',
    blocks: [
      'El Consejo de Ministros aprobó este martes un plan de 2.200 millones de euros para hacer frente a la sequía que afecta a buena parte del país desde hace tres años.',
      'El plan incluye la construcción de nuevas desaladoras en la costa mediterránea, ayudas a los agricultores que reduzcan el consumo de agua y obras para reparar las fugas en las redes de abastecimiento de los municipios.',
      'Las organizaciones agrarias consideran insuficientes las ayudas y reclaman una reforma de las concesiones de agua.',
    ],
  },
  it: {
    title: 'Riapre la funivia dopo i lavori di manutenzione',
    blocks: [
      'La funivia che collega il paese al rifugio in quota riaprirà sabato dopo sei mesi di lavori di manutenzione straordinaria. Sono state sostituite le funi portanti e rinnovate le cabine.',
      'Il costo dell’intervento è stato di circa tre milioni di euro. Il biglietto di andata e ritorno resta invariato per i residenti, mentre aumenta di due euro per i turisti.',
      'Gli operatori turistici della valle sperano in una stagione invernale migliore della precedente, segnata dalla scarsità di neve.',
    ],
  },
  pt: {
    title: 'Prefeitura amplia horário das creches municipais',
    blocks: [
      'A prefeitura anunciou nesta segunda-feira que as creches municipais passarão a funcionar até as 19h a partir de março, uma reivindicação antiga de mães e pais que trabalham longe de casa.',
      'Segundo a secretaria de educação, serão contratados 350 novos profissionais para cobrir o horário estendido. O investimento previsto é de 42 milhões de reais por ano.',
      'O sindicato dos professores afirmou que vai acompanhar as contratações e cobrou melhores condições de trabalho.',
    ],
  },
  nl: {
    title: 'Gemeente plant duizend nieuwe woningen op oud haventerrein',
    blocks: [
      'De gemeente wil op het voormalige haventerrein aan de noordkant van de stad duizend nieuwe woningen bouwen, waarvan een derde sociale huur. Dat staat in een plan dat het college dinsdag presenteerde.',
      'De eerste woningen moeten in 2027 klaar zijn. Omdat de grond vervuild is, moet eerst een groot deel worden gesaneerd.',
      'Bewoners van de aangrenzende wijk maken zich zorgen over verkeer en parkeren. De gemeente organiseert volgende maand een informatieavond.',
    ],
  },
  pl: {
    title: 'Nowa linia tramwajowa połączy osiedla z centrum',
    blocks: [
      'Miasto podpisało umowę na budowę nowej linii tramwajowej, która połączy dwa duże osiedla na południu z centrum. Trasa będzie miała ponad sześć kilometrów i jedenaście przystanków.',
      'Budowa ma potrwać dwa lata i kosztować blisko 400 milionów złotych, z czego większość pochodzi z funduszy unijnych.',
      'W czasie prac kierowcy muszą liczyć się z utrudnieniami na głównej ulicy prowadzącej do centrum.',
    ],
  },
  ja: {
    title: '市立図書館、開館時間を延長',
    blocks: [
      '市は来月から市立図書館の開館時間を午後九時まで延長すると発表した。仕事帰りの利用者からの要望に応えるもので、平日のみが対象となる。',
      '延長に伴い、職員を五人増やすほか、自動貸出機を新たに三台設置する。年間の費用はおよそ四千万円を見込んでいる。',
      '市の担当者は「より多くの市民に図書館を使ってほしい」と話している。',
    ],
  },
  zh: {
    title: '城市地铁新线路正式开通运营',
    blocks: [
      '本市地铁五号线于周六上午正式开通运营，全长二十三公里，共设十八座车站，连接城市东部的新区和老城中心。',
      '新线路开通后，从东部新区到市中心的通勤时间将从一个多小时缩短到四十分钟左右。开通首日，许多市民专程前来体验。',
      '地铁公司表示，开通初期列车间隔为六分钟，高峰时段将根据客流情况进一步加密。',
    ],
  },
  ru: {
    title: 'В городе откроют новый парк на месте заводской территории',
    blocks: [
      'На месте бывшего машиностроительного завода в центре города появится парк площадью двенадцать гектаров. Проект представили жителям на общественных слушаниях в понедельник.',
      'В парке планируют сохранить несколько исторических цехов, в которых разместятся выставочные залы, кафе и мастерские. Работы начнутся весной и продлятся около трёх лет.',
      'Жители близлежащих домов попросили предусмотреть больше парковочных мест и тихие зоны для отдыха.',
    ],
  },
  ar: {
    title: 'افتتاح مكتبة عامة جديدة في وسط المدينة',
    blocks: [
      'افتتحت البلدية يوم السبت مكتبة عامة جديدة في وسط المدينة تضم أكثر من ستين ألف كتاب وقاعات للمطالعة ومساحة مخصصة للأطفال.',
      'وقال رئيس البلدية إن المكتبة ستفتح أبوابها طوال أيام الأسبوع حتى العاشرة مساء، وإن الاشتراك فيها مجاني لجميع سكان المدينة.',
      'ويأمل القائمون على المشروع أن تصبح المكتبة مركزا ثقافيا يستضيف الندوات والمعارض وورش العمل.',
    ],
  },
  tr: {
    title: 'Belediye sahil yolunu bisiklet yoluyla yeniliyor',
    blocks: [
      'Belediye, sahil yolu boyunca sekiz kilometrelik bir bisiklet yolu yapılacağını açıkladı. Çalışmaların yaz sonunda tamamlanması planlanıyor.',
      'Proje kapsamında yaya yolları da genişletilecek ve sahil boyunca yeni oturma alanları yapılacak. Projenin maliyeti yaklaşık 90 milyon lira.',
      'Esnaf, çalışmalar sırasında sahil yolunun trafiğe kapatılmasının satışları etkileyeceğinden endişe ediyor.',
    ],
  },
};

// Navigation labels in a few languages.
export const NAV = {
  en: ['Home', 'News', 'Local', 'Politics', 'Business', 'Sport', 'Culture', 'Opinion', 'Weather', 'Travel', 'Podcasts', 'Puzzles'],
  de: ['Startseite', 'Nachrichten', 'Politik', 'Wirtschaft', 'Sport', 'Kultur', 'Meinung', 'Wetter', 'Reise'],
  fr: ['Accueil', 'Actualités', 'Politique', 'Économie', 'Sport', 'Culture', 'Opinions', 'Météo'],
  es: ['Portada', 'Nacional', 'Internacional', 'Economía', 'Deportes', 'Cultura', 'Opinión'],
  it: ['Home', 'Cronaca', 'Politica', 'Economia', 'Sport', 'Cultura', 'Meteo'],
  pt: ['Início', 'Cidades', 'Política', 'Economia', 'Esportes', 'Cultura'],
  nl: ['Home', 'Nieuws', 'Regio', 'Politiek', 'Economie', 'Sport', 'Cultuur'],
  pl: ['Strona główna', 'Wiadomości', 'Region', 'Polityka', 'Biznes', 'Sport', 'Kultura'],
  ja: ['トップ', 'ニュース', '地域', '政治', '経済', 'スポーツ', '文化'],
  zh: ['首页', '新闻', '本地', '财经', '体育', '文化', '评论'],
  ru: ['Главная', 'Новости', 'Город', 'Политика', 'Экономика', 'Спорт', 'Культура'],
  ar: ['الرئيسية', 'أخبار', 'محليات', 'سياسة', 'اقتصاد', 'رياضة', 'ثقافة'],
  tr: ['Ana Sayfa', 'Gündem', 'Yerel', 'Ekonomi', 'Spor', 'Kültür'],
};

// Headlines for the rails of foreign pages.
export const FOREIGN_HEADLINES = {
  de: [
    'Bahnstreik: Was Pendler jetzt wissen müssen',
    'Wetter: Der Herbst kommt mit Sturm',
    'Neue Kita eröffnet im Westend',
    'Mietspiegel: Preise steigen weiter',
    'Kommentar: Mehr Mut bei der Verkehrswende',
    'Feuerwehr rückt zu Großeinsatz aus',
    'Stadtfest lockt Tausende an',
    'Schwimmbad bleibt bis Mai geschlossen',
  ],
  fr: [
    'Grève des transports : les perturbations prévues',
    'Météo : un week-end pluvieux sur la région',
    'Le marché de Noël ouvre ses portes',
    'Immobilier : les prix se stabilisent',
    'Tribune : sauvons nos petites librairies',
    'Un incendie ravage un entrepôt',
    'Le club de rugby en finale',
    'La piscine fermée pour travaux',
  ],
  es: [
    'Huelga de transporte: los servicios mínimos',
    'El tiempo: lluvias en el norte',
    'La feria del libro abre sus puertas',
    'El precio de la vivienda sigue al alza',
    'Opinión: el agua es de todos',
    'Un incendio obliga a desalojar un edificio',
    'El equipo local asciende de categoría',
  ],
  it: [
    'Sciopero dei treni: le fasce garantite',
    'Meteo: arriva il maltempo',
    'Apre il mercatino di Natale',
    'Case, i prezzi crescono ancora',
    'Incendio in un capannone',
    'La squadra vince il derby',
  ],
  pt: [
    'Greve de ônibus: veja as linhas afetadas',
    'Previsão: semana de chuva forte',
    'Feira do livro começa hoje',
    'Preço dos aluguéis sobe de novo',
    'Incêndio atinge galpão na zona norte',
  ],
  nl: ['Staking in het openbaar vervoer', 'Weer: storm op komst', 'Nieuwe bibliotheek open', 'Huizenprijzen stijgen verder', 'Brand in bedrijfspand'],
  pl: ['Strajk w komunikacji miejskiej', 'Pogoda: nadchodzą przymrozki', 'Nowa biblioteka otwarta', 'Ceny mieszkań dalej rosną', 'Pożar hali magazynowej'],
  ja: ['台風接近、週末は大雨に警戒', '駅前再開発の計画まとまる', '市長選、三人が立候補表明', '新しい給食センター完成', '秋祭りに三万人'],
  zh: ['本周末全市将迎来降温', '老城区改造方案公布', '新学期中小学招生政策解读', '城市马拉松下月开跑', '多条公交线路调整'],
  ru: ['Синоптики обещают снег', 'В городе отремонтируют мост', 'Открылась новая школа', 'Цены на жильё снова выросли', 'Пожар на складе потушен'],
  ar: ['توقعات بأمطار غزيرة نهاية الأسبوع', 'افتتاح مستشفى جديد', 'ارتفاع أسعار الإيجارات', 'مهرجان الكتاب يفتح أبوابه', 'حريق في مستودع'],
  tr: ['Toplu taşımada yeni düzenleme', 'Hava durumu: sağanak yağış bekleniyor', 'Yeni kütüphane açıldı', 'Kira fiyatları yükselmeye devam ediyor', 'Depoda yangın çıktı'],
};
