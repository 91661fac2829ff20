// Empty: testdriver.js holds the automation protocol (see its header).
