"""The tools and requests ``bench/tool_use_eval.py`` scores a model's tool use on.

Eight tools, declared as a page declares them (``{name, description, inputSchema}``),
and three request sets written apart: ``TUNING``, for choosing how the runtime prompts
and holds calls, and ``REPORTING`` and ``FRESH``, used only to report final figures
(``FRESH`` written after ``REPORTING`` had been seen). Half of each set
needs a call (the tool, and the argument values the request states), half needs none
(chit-chat, general knowledge, and near-misses that touch a tool's topic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Numbers other than integers carry no bounds: the runtime holds none for them.
TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_weather",
        "description": "Get the weather forecast for a city",
        "inputSchema": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "day": {
                    "type": "string",
                    "enum": ["today", "tomorrow"],
                    "description": "Which day (default: today)",
                },
                "unit": {
                    "type": "string",
                    "enum": ["celsius", "fahrenheit"],
                    "description": "Temperature unit (default: celsius)",
                },
            },
            "required": ["city"],
        },
    },
    {
        "name": "convert_currency",
        "description": "Convert an amount of money from one currency to another",
        "inputSchema": {
            "type": "object",
            "properties": {
                "amount": {"type": "number", "description": "The amount to convert"},
                "from": {"type": "string", "description": "Three-letter currency code, e.g. USD"},
                "to": {"type": "string", "description": "Three-letter currency code, e.g. EUR"},
            },
            "required": ["amount", "from", "to"],
        },
    },
    {
        "name": "set_timer",
        "description": "Start a countdown timer",
        "inputSchema": {
            "type": "object",
            "properties": {
                "minutes": {"type": "number", "description": "Length of the timer in minutes"},
                "label": {"type": "string", "description": "A name for the timer"},
            },
            "required": ["minutes"],
        },
    },
    {
        "name": "send_message",
        "description": "Send a text message to one of the user's contacts",
        "inputSchema": {
            "type": "object",
            "properties": {
                "to": {"type": "string", "description": "The contact's name"},
                "message": {"type": "string", "description": "The text to send"},
            },
            "required": ["to", "message"],
        },
    },
    {
        "name": "create_event",
        "description": "Add an event to the user's calendar",
        "inputSchema": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "What the event is"},
                "date": {"type": "string", "description": "Date as YYYY-MM-DD"},
                "time": {"type": "string", "description": "Start time as HH:MM, 24-hour clock"},
                "duration_minutes": {"type": "integer", "minimum": 1, "maximum": 1440},
            },
            "required": ["title", "date"],
        },
    },
    {
        "name": "search_flights",
        "description": "Search for flights between two cities on a date",
        "inputSchema": {
            "type": "object",
            "properties": {
                "origin": {"type": "string", "description": "City to fly from"},
                "destination": {"type": "string", "description": "City to fly to"},
                "date": {"type": "string", "description": "Departure date as YYYY-MM-DD"},
                "passengers": {
                    "type": "object",
                    "properties": {
                        "adults": {"type": "integer", "minimum": 1, "maximum": 9},
                        "children": {"type": "integer", "minimum": 0, "maximum": 9},
                    },
                    "required": ["adults"],
                },
                "cabin": {
                    "type": "string",
                    "enum": ["economy", "premium economy", "business", "first"],
                },
            },
            "required": ["origin", "destination", "date", "passengers"],
        },
    },
    {
        "name": "set_lights",
        "description": "Turn the lights in a room on or off, or set their brightness",
        "inputSchema": {
            "type": "object",
            "properties": {
                "room": {
                    "type": "string",
                    "enum": ["living room", "kitchen", "bedroom", "bathroom", "office"],
                },
                "power": {"type": "string", "enum": ["on", "off"]},
                "brightness": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 100,
                    "description": "Brightness in percent",
                },
            },
            "required": ["room", "power"],
        },
    },
    {
        "name": "translate",
        "description": "Translate a phrase into another language",
        "inputSchema": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The phrase to translate"},
                "target_language": {
                    "type": "string",
                    "enum": [
                        "English",
                        "French",
                        "German",
                        "Spanish",
                        "Italian",
                        "Portuguese",
                        "Japanese",
                    ],
                },
            },
            "required": ["text", "target_language"],
        },
    },
]

SCHEMAS: dict[str, dict[str, Any]] = {tool["name"]: tool["inputSchema"] for tool in TOOLS}


@dataclass(frozen=True)
class Request:
    """What a person writes; the call it needs (``tool`` None: none), with the argument
    values it states (optional ones only where it states them)."""

    text: str
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


def call(text: str, tool: str, arguments: dict[str, Any]) -> Request:
    return Request(text, tool, arguments)


def none(text: str) -> Request:
    return Request(text)


def money(text: str, amount: float, source: str, target: str) -> Request:
    return call(text, "convert_currency", {"amount": amount, "from": source, "to": target})


def flight(
    text: str, route: tuple[str, str], date: str, adults: int, children: int = 0, cabin: str = ""
) -> Request:
    passengers = {"adults": adults} | ({"children": children} if children else {})
    arguments: dict[str, Any] = {"origin": route[0], "destination": route[1], "date": date}
    arguments |= {"passengers": passengers} | ({"cabin": cabin} if cabin else {})
    return call(text, "search_flights", arguments)


TUNING: list[Request] = [
    # -- needs a call
    call("Will it rain in Oslo tomorrow?", "get_weather", {"city": "Oslo", "day": "tomorrow"}),
    call("what's the weather like in Lisbon right now", "get_weather", {"city": "Lisbon"}),
    call(
        "How hot will it be in Phoenix tomorrow? In fahrenheit please",
        "get_weather",
        {"city": "Phoenix", "day": "tomorrow", "unit": "fahrenheit"},
    ),
    call(
        "Do I need an umbrella in London today?", "get_weather", {"city": "London", "day": "today"}
    ),
    money("How much is 50 US dollars in euros?", 50, "USD", "EUR"),
    money("convert 1200 yen to british pounds", 1200, "JPY", "GBP"),
    money("What's 75.5 Swiss francs in US dollars?", 75.5, "CHF", "USD"),
    money("I have 300 euros, how many Canadian dollars is that?", 300, "EUR", "CAD"),
    call("Set a timer for 10 minutes", "set_timer", {"minutes": 10}),
    call("timer 25 min please", "set_timer", {"minutes": 25}),
    call("Start a 3 minute timer called eggs", "set_timer", {"minutes": 3, "label": "eggs"}),
    call("set a timer for an hour and a half", "set_timer", {"minutes": 90}),
    call(
        'Send a message to Anna saying "running late, sorry"',
        "send_message",
        {"to": "Anna", "message": "running late, sorry"},
    ),
    call('text mom: "home by 8"', "send_message", {"to": "mom", "message": "home by 8"}),
    call(
        'Message David "the meeting moved to Thursday"',
        "send_message",
        {"to": "David", "message": "the meeting moved to Thursday"},
    ),
    call(
        'Can you tell Priya "happy birthday" over text?',
        "send_message",
        {"to": "Priya", "message": "happy birthday"},
    ),
    call(
        "Put Dentist in my calendar for March 14, 2026 at 3pm",
        "create_event",
        {"title": "Dentist", "date": "2026-03-14", "time": "15:00"},
    ),
    call(
        "Create an event named Team standup on 2 February 2026",
        "create_event",
        {"title": "Team standup", "date": "2026-02-02"},
    ),
    call(
        "schedule Book club for 2026-06-05 at 19:00, it lasts 90 minutes",
        "create_event",
        {"title": "Book club", "date": "2026-06-05", "time": "19:00", "duration_minutes": 90},
    ),
    flight(
        "Find me a flight from Paris to New York on 2026-05-10 for 2 adults",
        ("Paris", "New York"),
        "2026-05-10",
        2,
    ),
    flight(
        "Are there flights from Berlin to Rome on July 1st 2026? It's just me.",
        ("Berlin", "Rome"),
        "2026-07-01",
        1,
    ),
    flight(
        "search flights madrid to london 12 August 2026, two adults and one child, economy",
        ("Madrid", "London"),
        "2026-08-12",
        2,
        children=1,
        cabin="economy",
    ),
    flight(
        "I need a business class flight from Tokyo to Sydney on 2026-11-20, one passenger",
        ("Tokyo", "Sydney"),
        "2026-11-20",
        1,
        cabin="business",
    ),
    call("Turn off the kitchen lights", "set_lights", {"room": "kitchen", "power": "off"}),
    call("lights on in the bedroom pls", "set_lights", {"room": "bedroom", "power": "on"}),
    call(
        "Dim the living room lights to 30%",
        "set_lights",
        {"room": "living room", "power": "on", "brightness": 30},
    ),
    call(
        "Switch on the office light at full brightness",
        "set_lights",
        {"room": "office", "power": "on", "brightness": 100},
    ),
    call(
        'How do you say "where is the train station" in German?',
        "translate",
        {"text": "where is the train station", "target_language": "German"},
    ),
    call(
        'translate "thank you very much" to Japanese',
        "translate",
        {"text": "thank you very much", "target_language": "Japanese"},
    ),
    call(
        'What is "good morning" in Spanish?',
        "translate",
        {"text": "good morning", "target_language": "Spanish"},
    ),
    # added later, written before any change they were used to choose
    call("weather in Cairo tomorrow?", "get_weather", {"city": "Cairo", "day": "tomorrow"}),
    call(
        "Is it going to be sunny in Madrid today, in celsius",
        "get_weather",
        {"city": "Madrid", "day": "today", "unit": "celsius"},
    ),
    money("how many yen is 20 euros", 20, "EUR", "JPY"),
    call("Remind me in 45 minutes with a timer", "set_timer", {"minutes": 45}),
    call("start a timer for 20 minutes", "set_timer", {"minutes": 20}),
    call(
        'Text Lucas "see you at the gym"',
        "send_message",
        {"to": "Lucas", "message": "see you at the gym"},
    ),
    call(
        'send a text to Grandma saying "I love you"',
        "send_message",
        {"to": "Grandma", "message": "I love you"},
    ),
    call(
        "Add Lunch with Sam to my calendar on April 3, 2026 at 12:30pm",
        "create_event",
        {"title": "Lunch with Sam", "date": "2026-04-03", "time": "12:30"},
    ),
    flight(
        "flights from Chicago to Denver on 2026-09-15 for 3 adults",
        ("Chicago", "Denver"),
        "2026-09-15",
        3,
    ),
    call("turn the bathroom light off", "set_lights", {"room": "bathroom", "power": "off"}),
    call(
        "set the kitchen lights to 50 percent",
        "set_lights",
        {"room": "kitchen", "power": "on", "brightness": 50},
    ),
    call(
        'Translate "I am hungry" into French',
        "translate",
        {"text": "I am hungry", "target_language": "French"},
    ),
    call(
        'how would I say "nice to meet you" in Italian',
        "translate",
        {"text": "nice to meet you", "target_language": "Italian"},
    ),
    # -- needs none: chit-chat
    none("Hi there!"),
    none("How are you doing today?"),
    none("Thanks, that was helpful"),
    none("Tell me a joke"),
    none("good night!"),
    none("What's your name?"),
    none("I'm bored, any ideas?"),
    # general knowledge
    none("What is the capital of Australia?"),
    none("Why is the sky blue?"),
    none("How many legs does a spider have?"),
    none("Who wrote Pride and Prejudice?"),
    none("What is photosynthesis?"),
    none("Explain what a black hole is in one sentence"),
    none("What's 12 times 8?"),
    none("Give me a recipe idea for dinner"),
    none("What's the difference between a virus and a bacterium?"),
    # near-misses: a tool's topic, no call needed
    none("I love rainy weather"),
    none("Why is it colder in winter?"),
    none("Why was the euro introduced?"),
    none("I always forget my timers in the kitchen, haha"),
    none("How long should I boil an egg?"),
    none("Write a nice birthday message I could send to my friend"),
    none("My mom never answers her texts"),
    none("I have too many meetings this week, it's exhausting"),
    none("What's the longest flight in the world?"),
    none("Is flying or taking the train better for the environment?"),
    none("I prefer warm lighting in the bedroom"),
    none("Which is more efficient, LED or incandescent bulbs?"),
    none("I'm learning Spanish, any tips?"),
    none("Which language has the most native speakers?"),
    # added later, written before any change they were used to choose
    none("What a beautiful day!"),
    none("Can you help me with my homework?"),
    none("What's the boiling point of water?"),
    none("What rhymes with orange?"),
    none("I just got back from a trip to Japan"),
    none("Do you like music?"),
    none("My sister is visiting next week"),
    none("The kitchen is a mess"),
    none("How do airplanes stay in the air?"),
    none("I need to save more money"),
    none("Translation apps are so useful"),
    none("Tell me something interesting about octopuses"),
    none("It's freezing in here"),
]

#: Written apart from ``TUNING``, other phrasings and values: report final figures only.
REPORTING: list[Request] = [
    # -- needs a call
    call(
        "what's the forecast for Nairobi tomorrow?",
        "get_weather",
        {"city": "Nairobi", "day": "tomorrow"},
    ),
    call(
        "Is it cold in Montreal today? Celsius please",
        "get_weather",
        {"city": "Montreal", "day": "today", "unit": "celsius"},
    ),
    call("weather in Buenos Aires", "get_weather", {"city": "Buenos Aires"}),
    call(
        "Should I bring a jacket to Dublin tomorrow?",
        "get_weather",
        {"city": "Dublin", "day": "tomorrow"},
    ),
    money("How many euros do I get for 80 Australian dollars?", 80, "AUD", "EUR"),
    money("20 GBP to USD", 20, "GBP", "USD"),
    money("1000 Indian rupees in US dollars?", 1000, "INR", "USD"),
    money("Change 45.25 euros into Swiss francs", 45.25, "EUR", "CHF"),
    call("Remind me in 15 minutes with a timer", "set_timer", {"minutes": 15}),
    call("set a 2 hour timer", "set_timer", {"minutes": 120}),
    call(
        "Start a timer named laundry for 40 minutes",
        "set_timer",
        {"minutes": 40, "label": "laundry"},
    ),
    call("I need a 30 second timer", "set_timer", {"minutes": 0.5}),
    call(
        'send Tom a text: "dinner is ready"',
        "send_message",
        {"to": "Tom", "message": "dinner is ready"},
    ),
    call(
        'Tell Maria via text "see you at the station"',
        "send_message",
        {"to": "Maria", "message": "see you at the station"},
    ),
    call(
        'Could you message Kenji "I will be working from home today"',
        "send_message",
        {"to": "Kenji", "message": "I will be working from home today"},
    ),
    call(
        'Write to Lucas: "congrats on the new job"',
        "send_message",
        {"to": "Lucas", "message": "congrats on the new job"},
    ),
    call(
        "Add Yoga class to my calendar on 2026-04-08 at 6:30pm",
        "create_event",
        {"title": "Yoga class", "date": "2026-04-08", "time": "18:30"},
    ),
    call(
        "Can you schedule Project review on October 15, 2026 for 45 minutes?",
        "create_event",
        {"title": "Project review", "date": "2026-10-15", "duration_minutes": 45},
    ),
    call(
        "New calendar entry: Mom's birthday, 2026-09-27",
        "create_event",
        {"title": "Mom's birthday", "date": "2026-09-27"},
    ),
    call(
        "Book Car service in my calendar on 3 December 2026 at 08:00",
        "create_event",
        {"title": "Car service", "date": "2026-12-03", "time": "08:00"},
    ),
    flight(
        "Look up flights from Chicago to Denver on 2026-08-03 for one adult",
        ("Chicago", "Denver"),
        "2026-08-03",
        1,
    ),
    flight(
        "we are 3 adults and 2 kids flying Toronto to Cancun on December 20 2026, what's there?",
        ("Toronto", "Cancun"),
        "2026-12-20",
        3,
        children=2,
    ),
    flight(
        "first class Dubai to Singapore 2026-02-14, 2 people",
        ("Dubai", "Singapore"),
        "2026-02-14",
        2,
        cabin="first",
    ),
    flight(
        "Any premium economy flights from Amsterdam to Boston on 1 March 2026 for one adult?",
        ("Amsterdam", "Boston"),
        "2026-03-01",
        1,
        cabin="premium economy",
    ),
    call("Kill the lights in the bathroom", "set_lights", {"room": "bathroom", "power": "off"}),
    call("turn the living room lights on", "set_lights", {"room": "living room", "power": "on"}),
    call(
        "Set the bedroom lights to 10 percent",
        "set_lights",
        {"room": "bedroom", "power": "on", "brightness": 10},
    ),
    call(
        'Translate "I would like a coffee" into French',
        "translate",
        {"text": "I would like a coffee", "target_language": "French"},
    ),
    call(
        'how would an Italian say "see you tomorrow"',
        "translate",
        {"text": "see you tomorrow", "target_language": "Italian"},
    ),
    call(
        'Can you put "the bill, please" into Portuguese?',
        "translate",
        {"text": "the bill, please", "target_language": "Portuguese"},
    ),
    # -- needs none: chit-chat
    none("Hello!"),
    none("what's up?"),
    none("You're awesome, thank you"),
    none("Can you tell me a fun fact?"),
    none("Good morning :)"),
    none("Who made you?"),
    none("I had a long day today."),
    # general knowledge
    none("What's the tallest mountain in the world?"),
    none("How do vaccines work?"),
    none("Who painted the Mona Lisa?"),
    none("How many continents are there?"),
    none("What is the boiling point of water in Fahrenheit?"),
    none("Summarize the plot of Romeo and Juliet in two sentences"),
    none("What is 15% of 200?"),
    none("Why do cats purr?"),
    none("Suggest a name for my new puppy"),
    # near-misses: a tool's topic, no call needed
    none("Snow makes me so happy"),
    none("What causes thunderstorms?"),
    none("Why are some currencies stronger than others?"),
    none("My grandma collects old coins"),
    none("How long does it take to bake bread?"),
    none("Timers make me anxious, honestly"),
    none("Help me word an apology text to a friend"),
    none("Do people still send letters?"),
    none("What's a good way to organise my week?"),
    none("How many days are there in a leap year?"),
    none("What was the first airline?"),
    none("Any tips for dealing with jet lag?"),
    none("Why do lightbulbs burn out?"),
    none("Is Japanese hard to learn for English speakers?"),
]

#: A second reporting set, written after ``REPORTING``'s failures had been seen (and
#: had guided choices: docs/tool-use.md), before any run on it: other values and
#: phrasings, the same tools and shares.
FRESH: list[Request] = [
    # -- needs a call
    call(
        "Is it going to snow in Helsinki tomorrow?",
        "get_weather",
        {"city": "Helsinki", "day": "tomorrow"},
    ),
    call(
        "How warm is it in Athens today? fahrenheit",
        "get_weather",
        {"city": "Athens", "day": "today", "unit": "fahrenheit"},
    ),
    call("weather for Seoul please", "get_weather", {"city": "Seoul"}),
    call("Will I need sunglasses in Lima today?", "get_weather", {"city": "Lima", "day": "today"}),
    money("Convert 250 US dollars to Japanese yen", 250, "USD", "JPY"),
    money("what is 75 Canadian dollars in euros", 75, "CAD", "EUR"),
    money("How much is 500 Mexican pesos in US dollars?", 500, "MXN", "USD"),
    money("12.50 EUR in GBP?", 12.5, "EUR", "GBP"),
    call("Can you set a timer for 8 minutes?", "set_timer", {"minutes": 8}),
    call("start a 45 minute timer", "set_timer", {"minutes": 45}),
    call("Timer for 5 minutes, call it tea", "set_timer", {"minutes": 5, "label": "tea"}),
    call("timer for 90 seconds please", "set_timer", {"minutes": 1.5}),
    call(
        'Text Sofia "running 10 minutes late"',
        "send_message",
        {"to": "Sofia", "message": "running 10 minutes late"},
    ),
    call(
        'Send a message to Omar saying "happy new year"',
        "send_message",
        {"to": "Omar", "message": "happy new year"},
    ),
    call(
        'Message Grandpa: "we landed safely"',
        "send_message",
        {"to": "Grandpa", "message": "we landed safely"},
    ),
    call(
        'Let Chloe know by text "I left my keys at your place"',
        "send_message",
        {"to": "Chloe", "message": "I left my keys at your place"},
    ),
    call(
        "Put Haircut on my calendar for 2026-05-19 at 2pm",
        "create_event",
        {"title": "Haircut", "date": "2026-05-19", "time": "14:00"},
    ),
    call(
        "Create an event called Board meeting on June 3, 2026 at 10am for 60 minutes",
        "create_event",
        {"title": "Board meeting", "date": "2026-06-03", "time": "10:00", "duration_minutes": 60},
    ),
    call(
        "Add Piano recital on 21 November 2026 to my calendar",
        "create_event",
        {"title": "Piano recital", "date": "2026-11-21"},
    ),
    call(
        "calendar: Quarterly planning, 2026-07-01, 09:30, 2 hours",
        "create_event",
        {
            "title": "Quarterly planning",
            "date": "2026-07-01",
            "time": "09:30",
            "duration_minutes": 120,
        },
    ),
    flight(
        "Find flights from Lisbon to Rome on 2026-05-02 for 2 adults",
        ("Lisbon", "Rome"),
        "2026-05-02",
        2,
    ),
    flight(
        "I need a business class flight from London to Boston on July 9, 2026, just me",
        ("London", "Boston"),
        "2026-07-09",
        1,
        cabin="business",
    ),
    flight(
        "Flights Sydney to Auckland 2026-10-10, two adults and one child",
        ("Sydney", "Auckland"),
        "2026-10-10",
        2,
        children=1,
    ),
    flight(
        "search economy flights from Vienna to Prague on 5 April 2026 for 4 adults",
        ("Vienna", "Prague"),
        "2026-04-05",
        4,
        cabin="economy",
    ),
    call("lights off in the office please", "set_lights", {"room": "office", "power": "off"}),
    call(
        "Make the kitchen lights 75 percent",
        "set_lights",
        {"room": "kitchen", "power": "on", "brightness": 75},
    ),
    call("Switch the living room light on", "set_lights", {"room": "living room", "power": "on"}),
    call(
        'Translate "where is the library" to Spanish',
        "translate",
        {"text": "where is the library", "target_language": "Spanish"},
    ),
    call(
        'What\'s "thank you for dinner" in German?',
        "translate",
        {"text": "thank you for dinner", "target_language": "German"},
    ),
    call(
        'How do I say "good night" in Portuguese?',
        "translate",
        {"text": "good night", "target_language": "Portuguese"},
    ),
    # -- needs none: chit-chat
    none("Hey, how's it going?"),
    none("Thanks so much for your help!"),
    none("Tell me something interesting"),
    none("What's your favourite colour?"),
    none("Are you a robot?"),
    none("See you later!"),
    none("I just got a new job!"),
    # general knowledge
    none("What is the capital of Canada?"),
    none("How does a rainbow form?"),
    none("Who wrote The Odyssey?"),
    none("How fast does light travel?"),
    none("How many bones are in the human body?"),
    none("What is 9 times 7?"),
    none("Why do leaves change colour in autumn?"),
    none("Can you explain what inflation is?"),
    none("Recommend a good book for a long weekend"),
    # near-misses: a tool's topic, no call needed
    none("I miss the summer sun"),
    none("What is a heatwave?"),
    none("Is the euro used in Switzerland?"),
    none("I found a five dollar bill on the street today"),
    none("How do I cook rice without burning it?"),
    none("What is the Pomodoro technique?"),
    none("My phone keeps buzzing with messages"),
    none("Write a short poem about friendship"),
    none("I keep forgetting my friends' birthdays"),
    none("What's the cheapest day of the week to fly?"),
    none("Airports are so stressful"),
    none("Why do LED bulbs last longer?"),
    none("I like reading in dim light"),
    none("Which languages are spoken in Canada?"),
]

SETS: dict[str, list[Request]] = {"tuning": TUNING, "reporting": REPORTING, "fresh": FRESH}
